package ingest

import (
	"testing"

	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// The write rules' table: one rule per kind, each an accepted, stored kind,
// in kind order, and every NIP-29 moderation kind has its own rule.
func TestKindRulesTable(t *testing.T) {
	seen := map[int]bool{}
	prev := -1
	for _, r := range kindRules {
		if seen[r.kind] {
			t.Errorf("kind %d has two rules", r.kind)
		}
		seen[r.kind] = true
		if r.kind <= prev {
			t.Errorf("kind %d (%s) is out of order after %d", r.kind, r.name, prev)
		}
		prev = r.kind
		if !kinds.Accepted(r.kind) || kinds.Ephemeral(r.kind) || r.name == "" || r.rule == nil {
			t.Errorf("kind %d (%q): a rule for a kind that is not accepted and stored, or unnamed", r.kind, r.name)
		}
	}
	for k := 9000; k <= 9022; k++ {
		if kinds.Moderation(k) && kinds.Accepted(k) && !seen[k] {
			t.Errorf("moderation kind %d has no rule of its own", k)
		}
	}
	if len(rules) != len(kindRules) {
		t.Errorf("rules holds %d kinds, kindRules %d", len(rules), len(kindRules))
	}
	for _, p := range inTx {
		if p.name == "" || p.run == nil {
			t.Errorf("an unnamed or empty in-transaction policy: %+v", p.name)
		}
	}
	for _, p := range beforeTx {
		if p.name == "" || p.check == nil {
			t.Errorf("an unnamed or empty check: %+v", p.name)
		}
	}
}

package kinds

import (
	"os"
	"strings"
	"testing"
)

// A kind inside a range row and a single row gets the single row; a kind
// inside the job range (43001-43006) gets the job row, not the ephemeral
// range; a kind between rows gets none.
func TestLookupNarrowest(t *testing.T) {
	for _, c := range []struct {
		kind int
		name string
		ok   bool
	}{
		{43003, "agent job", true},
		{24200, "agent observer frame", true},
		{20002, "typing indicator", true},
		{21000, "ephemeral", true},
		{43007, "", false},
		{40001, "", false},
	} {
		k, ok := Lookup(c.kind)
		if ok != c.ok || k.Name != c.name {
			t.Errorf("Lookup(%d) = %q %v, want %q %v", c.kind, k.Name, ok, c.name, c.ok)
		}
	}
}

// Buzz's shared tag: exactly one ["shared","true"]; any other shape fails
// closed.
func TestShared(t *testing.T) {
	for _, c := range []struct {
		name string
		tags [][]string
		want bool
	}{
		{"none", [][]string{{"d", "x"}}, false},
		{"exact", [][]string{{"d", "x"}, {"shared", "true"}}, true},
		{"false", [][]string{{"shared", "false"}}, false},
		{"twice", [][]string{{"shared", "true"}, {"shared", "true"}}, false},
		{"three elements", [][]string{{"shared", "true", "x"}}, false},
		{"name only", [][]string{{"shared"}}, false},
		{"exact and a malformed one", [][]string{{"shared", "true"}, {"shared"}}, false},
		{"upper case value", [][]string{{"shared", "TRUE"}}, false},
	} {
		if got := Shared(c.tags); got != c.want {
			t.Errorf("%s: Shared = %v, want %v", c.name, got, c.want)
		}
	}
}

// Engine kinds are refused, never accepted, and each names what is missing.
func TestEnginesAreRefused(t *testing.T) {
	n := 0
	for _, e := range engines {
		if e.Missing == "" || e.Reason == "" {
			t.Errorf("engine %v: needs what is missing and why", e.Kinds)
		}
		for _, k := range e.Kinds {
			n++
			if _, ok := Lookup(k); ok {
				t.Errorf("engine kind %d has a row in the kinds table", k)
			}
			if m, ok := NeedsEngine(k); !ok || m != e.Missing {
				t.Errorf("NeedsEngine(%d) = %q %v", k, m, ok)
			}
		}
	}
	if n == 0 {
		t.Fatal("no engine kinds")
	}
	if _, ok := NeedsEngine(9); ok {
		t.Error("kind 9 needs no engine")
	}
}

// Every replaceable kind is 0, 3 or in NIP-01's replaceable range: the
// events_replaceable index (migrations/010) covers that range whole.
func TestReplaceableKindsInIndexedRange(t *testing.T) {
	for _, k := range ReplaceableKinds() {
		if k != Profile && k != FollowList && (k < ReplaceableFirst || k > ReplaceableLast) {
			t.Errorf("replaceable kind %d is outside 0, 3 and %d-%d", k, ReplaceableFirst, ReplaceableLast)
		}
	}
}

// docs/compatibility.md names what each engine kind group lacks.
func TestCompatibilityNamesEngines(t *testing.T) {
	b, err := os.ReadFile("../../../docs/compatibility.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ") // lines wrap anywhere
	for _, e := range engines {
		if !strings.Contains(text, e.Missing) {
			t.Errorf("docs/compatibility.md does not say that kinds %v need %s", e.Kinds, e.Missing)
		}
	}
}

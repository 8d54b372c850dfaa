package resolve

import (
	"strings"
	"testing"
)

// One vocabulary closes a report on both doors (9044 and NIP-86
// resolvereport): anything outside it is invalid:.
func TestResolveVocabularyIsOneRule(t *testing.T) {
	for _, c := range []struct {
		status, action string
		has, ok        bool
	}{
		{"resolved", "", false, true},
		{"dismissed", "dismiss", true, true},
		{"resolved", "ban", true, true},
		{"open", "", false, false},
		{"", "", false, false},
		{"resolved", "", true, false},
		{"resolved", "nuke", true, false},
	} {
		err := Check(c.status, c.action, c.has)
		if (err == nil) != c.ok || (err != nil && !strings.HasPrefix(err.Error(), "invalid: ")) {
			t.Errorf("Check(%q, %q, %v) = %v, want ok=%v", c.status, c.action, c.has, err, c.ok)
		}
	}
}

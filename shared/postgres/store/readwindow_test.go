package store

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/migrations"
)

// The window's fixed predicate is the exact text of the events_window
// partial index (migrations 002 and 004), or the planner cannot prove the
// index applies.
func TestNotRowKindsIsTheIndexPredicate(t *testing.T) {
	text := strings.TrimPrefix(notRowKinds, "e.")
	for _, name := range []string{"002_query.sql", "004_window_depth.sql"} {
		b, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), text) {
			t.Errorf("%s does not carry %s", name, text)
		}
	}
}

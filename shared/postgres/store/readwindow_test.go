package store

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/migrations"
)

// The window's fixed predicate is the exact text of the events_window
// partial index (its newest definition, migrations/010), or the planner
// cannot prove the index applies.
func TestNotRowKindsIsTheIndexPredicate(t *testing.T) {
	text := strings.TrimPrefix(notRowKinds, "e.")
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	newest, body := "", ""
	for _, name := range names {
		b, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "CREATE INDEX events_window") {
			newest, body = name, string(b)
		}
	}
	if !strings.Contains(body, text) {
		t.Errorf("%s, the newest events_window, does not carry %s", newest, text)
	}
}

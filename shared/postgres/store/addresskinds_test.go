package store

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/migrations"
)

// The address test in the write statements reads shared/domain/kinds; its SQL
// text is the predicate of the events_replaceable index (migrations/010: 0, 3
// and NIP-01's replaceable and addressable ranges).
func TestAddressKindsSQL(t *testing.T) {
	if want := "(kind IN (0, 3) OR kind BETWEEN 10000 AND 19999 OR kind BETWEEN 30000 AND 39999)"; addressKinds != want {
		t.Errorf("addressKinds = %q, want %q", addressKinds, want)
	}
	b, err := fs.ReadFile(migrations.FS, "010_buzz_kinds.sql")
	if err != nil {
		t.Fatal(err)
	}
	if pred := strings.Trim(addressKinds, "()"); !strings.Contains(string(b), "WHERE "+pred+";") {
		t.Errorf("010_buzz_kinds.sql's events_replaceable is not WHERE %s", pred)
	}
}

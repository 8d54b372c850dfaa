package store

import "testing"

// The address test in the write statements reads shared/domain/kinds; its SQL text
// is migrations/009_nip29.sql's events_replaceable predicate (issue 28: NIP-01's
// whole replaceable range, for 10002, 10050 and NIP-51's lists).
func TestAddressKindsSQL(t *testing.T) {
	if want := "(kind IN (0, 3) OR kind BETWEEN 10000 AND 19999 OR kind BETWEEN 30000 AND 39999)"; addressKinds != want {
		t.Errorf("addressKinds = %q, want %q", addressKinds, want)
	}
}

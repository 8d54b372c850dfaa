package store

import "testing"

// The address test in the write statements reads shared/domain/kinds; its SQL text
// is the one the statements spelled before.
func TestAddressKindsSQL(t *testing.T) {
	if want := "(kind IN (0, 3, 10009) OR kind BETWEEN 30000 AND 39999)"; addressKinds != want {
		t.Errorf("addressKinds = %q, want %q", addressKinds, want)
	}
}

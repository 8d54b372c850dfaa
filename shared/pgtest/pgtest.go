// Package pgtest is a bridge for callers written before the test kit: a
// fresh migrated database now comes from testkit.NewDatabase. It goes once
// shared/query's tests call the kit.
package pgtest

import (
	"testing"

	"github.com/buzzrelay/relay/shared/testkit"
)

// NewDatabase is testkit.NewDatabase.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return testkit.NewDatabase(t)
}

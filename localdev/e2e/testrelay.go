package e2e

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// StartTest starts a harness relay over a fresh migrated database
// (testkit.NewDatabase), closed when the test ends. Without o.Log the
// handlers' errors go to stderr.
func StartTest(t testing.TB, o Options) *Relay {
	t.Helper()
	dsn := testkit.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if o.Log == nil {
		o.Log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	r, err := Start(ctx, dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

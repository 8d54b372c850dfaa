package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestAuroraRoundTripIsChargedPerStatementAndBatch: with the emulated
// round trip (AURORA_ROUND_TRIP) a statement waits it before it is sent,
// a batch once for all its statements, and every statement is still
// counted.
func TestAuroraRoundTripIsChargedPerStatementAndBatch(t *testing.T) {
	const rt = 300 * time.Millisecond
	st := testkit.NewStore(t, store.Options{MaxConns: 1, RoundTrip: rt})
	ctx := context.Background()
	pool := store.PoolOf(st)
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil { // the connection is open
		t.Fatal(err)
	}
	before := st.Statements()
	start := time.Now()
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < rt {
		t.Errorf("a statement took %s, less than the round trip %s", d, rt)
	}
	b := &pgx.Batch{}
	for range 3 {
		b.Queue("SELECT 1")
	}
	start = time.Now()
	if err := pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < rt {
		t.Errorf("a batch took %s, less than the round trip %s", d, rt)
	}
	if n := st.Statements() - before; n != 4 {
		t.Errorf("%d statements counted, want 4", n)
	}
}

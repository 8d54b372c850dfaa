package store_test

import (
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// An idle relay must hold no database connection, so Aurora can pause: the
// pool keeps no minimum and closes connections unused for IdleTimeout.
func TestIdlePoolDropsToZeroConnections(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dsn := testkit.NewDatabase(t)
	const idle = 500 * time.Millisecond
	st, err := store.Open(ctx, dsn, store.Options{MaxConns: 4, IdleTimeout: idle})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := store.PoolOf(st).Stat().TotalConns(); n != 0 {
		t.Fatalf("a fresh pool holds %d connections, want 0 (it connects lazily)", n)
	}
	// Four requests at once open four connections.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := store.PoolOf(st).Exec(ctx, "SELECT pg_sleep(0.2)"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	name := databaseName(t, dsn)
	if n, s := store.PoolOf(st).Stat().TotalConns(), serverSessions(t, name); n != 4 || s != 4 {
		t.Fatalf("after 4 concurrent requests: pool %d, server sessions %d, want 4 and 4", n, s)
	}
	idleSince := time.Now()
	deadline := idleSince.Add(10 * idle)
	for time.Now().Before(deadline) && (store.PoolOf(st).Stat().TotalConns() > 0 || serverSessions(t, name) > 0) {
		time.Sleep(50 * time.Millisecond)
	}
	if n, s := store.PoolOf(st).Stat().TotalConns(), serverSessions(t, name); n != 0 || s != 0 {
		t.Fatalf("idle for %s (idle timeout %s): pool %d, server sessions %d, want 0", 10*idle, idle, n, s)
	}
	t.Logf("idle timeout %s: pool and server at 0 connections %s after the last request", idle, time.Since(idleSince).Round(10*time.Millisecond))
	// And the next request reconnects.
	if err := st.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func databaseName(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// serverSessions counts the client sessions Postgres has open to database name.
func serverSessions(t *testing.T, name string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(),
		`SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

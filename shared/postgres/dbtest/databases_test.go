package dbtest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Concurrent callers build a template once; its clones carry what the
// build wrote; a newer version replaces the older template.
func TestEnsureTemplateBuildsOnceAndClones(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := testkit.AdminDSN(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	prefix := "t_tpl_" + hex.EncodeToString(b[:]) + "_"
	var builds atomic.Int32
	build := func(ctx context.Context, dsn string) error {
		builds.Add(1)
		st, err := dbtest.Open(ctx, dsn)
		if err != nil {
			return err
		}
		defer st.Close()
		_, err = st.Exec(ctx, `CREATE TABLE marker (v text); INSERT INTO marker VALUES ('built')`)
		return err
	}
	t.Cleanup(func() {
		for _, v := range []string{"v1", "v2"} {
			_ = dbtest.DropDatabase(context.Background(), admin, prefix+v)
		}
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := dbtest.EnsureTemplate(ctx, admin, prefix, prefix+"v1", build); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("template built %d times, want 1", n)
	}
	for i := range 2 { // clones at once never find the template busy
		name := prefix + "clone" + string(rune('a'+i))
		dsn, err := dbtest.CreateDatabase(ctx, admin, name, prefix+"v1")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = dbtest.DropDatabase(context.Background(), admin, name) })
		st, err := dbtest.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var v string
		err = st.QueryRow(ctx, `SELECT v FROM marker`).Scan(&v)
		st.Close()
		if err != nil || v != "built" {
			t.Fatalf("clone %s: %q %v", name, v, err)
		}
	}
	if err := dbtest.EnsureTemplate(ctx, admin, prefix, prefix+"v2", build); err != nil || builds.Load() != 2 {
		t.Fatalf("v2: %v, %d builds", err, builds.Load())
	}
	if _, err := dbtest.CreateDatabase(ctx, admin, prefix+"old", prefix+"v1"); err == nil {
		_ = dbtest.DropDatabase(ctx, admin, prefix+"old")
		t.Fatal("the older template is still there")
	}
}

// AnalyzeDatabase refreshes the statistics of every table of the database,
// also of one the relay did not create.
func TestAnalyzeDatabase(t *testing.T) {
	ctx := context.Background()
	st := testkit.OpenDB(t, testkit.NewDatabase(t))
	if _, err := st.Exec(ctx, `CREATE TABLE peer_events AS SELECT g AS id FROM generate_series(1, 500) g`); err != nil {
		t.Fatal(err)
	}
	if err := dbtest.AnalyzeDatabase(ctx, st.Config().ConnString()); err != nil {
		t.Fatal(err)
	}
	var tuples float64
	if err := st.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE relname = 'peer_events'`).Scan(&tuples); err != nil {
		t.Fatal(err)
	}
	if tuples != 500 {
		t.Fatalf("reltuples of peer_events = %v after AnalyzeDatabase, want 500", tuples)
	}
}

package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// PushRatesTake under concurrency (issue 51): 30 tries at once against a
// host capped at 10 a minute take exactly 10; a try is counted against
// all its scopes or none, so a host refused by the community's cap keeps
// the count it really sent; another minute starts again.
func TestPushRatesTakeExactUnderConcurrency(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st := testkit.NewStore(t, store.Options{MaxConns: 8})
	const minute = 1000
	host := func(h string) []store.PushRate {
		return []store.PushRate{{Scope: "host:" + h, PerMinute: 10}, {Scope: "community:c1", PerMinute: 14}}
	}
	var took atomic.Int32
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := st.PushRatesTake(ctx, minute, host("a.example"))
			if err != nil {
				t.Error(err)
			}
			if ok {
				took.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := took.Load(); n != 10 {
		t.Fatalf("30 concurrent tries against a cap of 10 took %d", n)
	}
	// Another host of the same community: the community's cap (14) leaves
	// it 4; its fifth try counts nothing anywhere.
	for i := range 6 {
		ok, err := st.PushRatesTake(ctx, minute, host("b.example"))
		if err != nil {
			t.Fatal(err)
		}
		if want := i < 4; ok != want {
			t.Errorf("b.example try %d: took %v, want %v", i, ok, want)
		}
	}
	var n int
	if err := store.PoolOf(st).QueryRow(ctx, `SELECT n FROM push_rates WHERE scope = 'host:b.example' AND minute = $1`, minute).Scan(&n); err != nil || n != 4 {
		t.Errorf("b.example counted %d (%v), want 4: a refused try counts nowhere", n, err)
	}
	// Another community's own cap is its own.
	if ok, err := st.PushRatesTake(ctx, minute, []store.PushRate{{Scope: "host:c.example", PerMinute: 10}, {Scope: "community:c2", PerMinute: 14}}); err != nil || !ok {
		t.Errorf("another community refused: %v %v", ok, err)
	}
	if ok, err := st.PushRatesTake(ctx, minute+1, host("a.example")); err != nil || !ok {
		t.Errorf("the next minute refused: %v %v", ok, err)
	}
	if err := st.PushRatesDelete(ctx, minute+1); err != nil {
		t.Fatal(err)
	}
	if err := store.PoolOf(st).QueryRow(ctx, `SELECT count(*) FROM push_rates WHERE minute < $1`, minute+1).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d old counters left (%v)", n, err)
	}
}

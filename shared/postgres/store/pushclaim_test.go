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

// PushDeliveriesClaim and PushDeliveriesSetClaimed (issue 51): of 30
// concurrent claims of one due delivery exactly one is taken (no two runs
// or goroutines send it); while the claim stands nothing else takes it; a
// try whose claim lapsed and was taken by another run records nothing
// over that run's (the claim fences the outcome); the outcome is recorded
// once; a claim over a full rate counts nothing, makes no attempt and
// leaves the delivery due at the next minute.
func TestPushDeliveriesClaimIsExclusiveAndFencesTheOutcome(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st := testkit.NewStore(t, store.Options{MaxConns: 8})
	const community, now = "c1", int64(1_800_000_000)
	d := store.PushDelivery{EventID: "e1", PushAddress: store.PushAddress{Pubkey: "p1", Kind: 30390, D: "d"}, Target: "https://a.example/cb"}
	if n, err := st.PushDeliveriesInsert(ctx, community, []store.PushDelivery{d}, now); err != nil || n != 1 {
		t.Fatalf("insert: %d %v", n, err)
	}
	minute := now / 60
	rates := []store.PushRate{{Scope: "host/a.example", PerMinute: 100}}

	var taken atomic.Int32
	var first store.PushClaim
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, res, err := st.PushDeliveriesClaim(ctx, community, d, now, now+15, minute, rates)
			if err != nil {
				t.Error(err)
			}
			if res == store.PushClaimTaken {
				taken.Add(1)
				mu.Lock()
				first = c
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if n := taken.Load(); n != 1 {
		t.Fatalf("30 concurrent claims of one delivery: %d taken, want 1", n)
	}
	if first.Until != now+15 || first.Attempts != 0 {
		t.Errorf("claim %+v, want until %d and no attempt before", first, now+15)
	}
	if _, res, err := st.PushDeliveriesClaim(ctx, community, d, now+14, now+29, minute, rates); err != nil || res != store.PushClaimHeld {
		t.Errorf("a claim while the first stands: %v %v, want held", res, err)
	}
	// The first try outlives its claim: another run takes it at the lapse.
	second, res, err := st.PushDeliveriesClaim(ctx, community, d, now+15, now+30, minute, rates)
	if err != nil || res != store.PushClaimTaken {
		t.Fatalf("a claim at the lapse: %v %v, want taken", res, err)
	}
	if ok, err := st.PushDeliveriesSetClaimed(ctx, community, first, store.PushSent, 1, now+16, now+16); err != nil || ok {
		t.Errorf("the lapsed claim recorded its outcome: %v %v, want refused", ok, err)
	}
	if ok, err := st.PushDeliveriesSetClaimed(ctx, community, second, store.PushPending, 1, now+20, now+16); err != nil || !ok {
		t.Fatalf("the standing claim's outcome: %v %v", ok, err)
	}
	if ok, err := st.PushDeliveriesSetClaimed(ctx, community, second, store.PushSent, 2, now+20, now+16); err != nil || ok {
		t.Errorf("one claim recorded two outcomes: %v %v", ok, err)
	}
	var attempts int
	var nextAt int64
	var state string
	read := func() {
		t.Helper()
		if err := store.PoolOf(st).QueryRow(ctx, `SELECT state, attempts, next_at FROM push_deliveries WHERE event_id = 'e1'`).Scan(&state, &attempts, &nextAt); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if state != store.PushPending || attempts != 1 || nextAt != now+20 {
		t.Fatalf("after a failed try: %s, %d attempts, next %d; want pending, 1, %d", state, attempts, nextAt, now+20)
	}
	// A full rate: nothing counted, no attempt, due at the next minute.
	full := []store.PushRate{{Scope: "host/a.example", PerMinute: 100}, {Scope: "host/full.example", PerMinute: 1}}
	if ok, err := st.PushRatesTake(ctx, minute, full[1:]); err != nil || !ok {
		t.Fatalf("fill host/full.example: %v %v", ok, err)
	}
	if _, res, err := st.PushDeliveriesClaim(ctx, community, d, now+20, now+35, minute, full); err != nil || res != store.PushClaimRateFull {
		t.Fatalf("a claim over a full rate: %v %v, want rate full", res, err)
	}
	read()
	if state != store.PushPending || attempts != 1 || nextAt != (minute+1)*60 {
		t.Errorf("after a full rate: %s, %d attempts, next %d; want pending, 1, %d", state, attempts, nextAt, (minute+1)*60)
	}
	var n int
	if err := store.PoolOf(st).QueryRow(ctx, `SELECT n FROM push_rates WHERE scope = 'host/a.example' AND minute = $1`, minute).Scan(&n); err != nil || n != 2 {
		t.Errorf("host/a.example counted %d (%v), want 2: the two claims taken, not the refused one", n, err)
	}
	// Skipping never takes a claimed delivery from its run.
	third, res, err := st.PushDeliveriesClaim(ctx, community, d, (minute+1)*60, (minute+1)*60+15, minute+1, rates)
	if err != nil || res != store.PushClaimTaken {
		t.Fatalf("claim in the next minute: %v %v", res, err)
	}
	if ok, err := st.PushDeliveriesSetSkipped(ctx, community, d, (minute+1)*60+1); err != nil || ok {
		t.Errorf("skipped a claimed delivery: %v %v", ok, err)
	}
	if ok, err := st.PushDeliveriesSetClaimed(ctx, community, third, store.PushSent, 2, (minute+1)*60+2, (minute+1)*60+2); err != nil || !ok {
		t.Errorf("the third claim's outcome: %v %v", ok, err)
	}
	read()
	if state != store.PushSent || attempts != 2 {
		t.Errorf("finally %s after %d attempts, want sent after 2", state, attempts)
	}
}

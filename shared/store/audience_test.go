package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/store"
)

// TestAudienceParts: a large audience is loaded by the fan-out function in
// parts that hold every subscription stored up to the cutoff exactly once,
// a connection's subscriptions in one part; a subscription stored (or
// replaced) after the cutoff is in none; the publisher's lookup reads at
// most its limit, says it was reached and reads the cutoff with it, and
// the fan-out function counts the audience.
func TestAudienceParts(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	const community, channel = "default", "8f14e45f-ceea-467f-a0e6-3f1a4a8e2f10"
	now := time.Now().Unix()
	subscribe := func(conn, sub string, pins ...string) {
		t.Helper()
		ok, err := st.Subscribe(ctx, store.NewSubscription{
			Subscription: store.Subscription{Connection: conn, Sub: sub, Pubkey: "pk", Filters: `[{"kinds":[9]}]`},
			Community:    community, Pins: pins, CreatedAt: now,
		}, 10)
		if err != nil || !ok {
			t.Fatalf("subscribe %s/%s: %v %v", conn, sub, ok, err)
		}
	}
	for i := range 40 {
		conn := fmt.Sprintf("conn-%02d", i)
		if err := st.OpenConnection(ctx, store.Connection{ID: conn, Community: community, Challenge: "c", RelayURLs: []string{"ws://x"},
			ConnectedAt: now, ExpiresAt: now + 3600}, 0); err != nil {
			t.Fatal(err)
		}
		subscribe(conn, "a", channel)
		if i%4 == 0 {
			subscribe(conn, "b", channel, "") // pinned and in the any-channel bucket: one subscription
		}
	}
	d, err := st.ForDelivery(ctx, community, store.DeliveryRequest{Channels: []string{channel}, Now: now, Limit: 6})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Subscriptions) != 6 || !d.Over || d.Cutoff == 0 {
		t.Fatalf("publisher's lookup: %d subscriptions, over %v, cutoff %d; want 6, true, > 0",
			len(d.Subscriptions), d.Over, d.Cutoff)
	}
	if n, err := st.AudienceSize(ctx, community, []string{channel}); err != nil || n != 50 {
		t.Fatalf("audience size %d, %v; want 50", n, err)
	}
	subscribe("conn-00", "late", channel) // stored after the commit
	subscribe("conn-01", "a", channel)    // replaced after the commit

	const parts = 4
	seen := map[[2]string]int{}
	partOf := map[string]int{}
	for p := range parts {
		subs, err := st.AudiencePart(ctx, community, []string{channel}, d.Cutoff, p, parts, now)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			seen[[2]string{s.Connection, s.Sub}]++
			if q, ok := partOf[s.Connection]; ok && q != p {
				t.Errorf("connection %s is in parts %d and %d", s.Connection, q, p)
			}
			partOf[s.Connection] = p
		}
	}
	if len(seen) != 49 {
		t.Errorf("parts hold %d subscriptions, want 49 (50 stored by the cutoff, one replaced after it)", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%v is in %d parts", k, n)
		}
	}
	for _, k := range [][2]string{{"conn-00", "late"}, {"conn-01", "a"}} {
		if seen[k] != 0 {
			t.Errorf("%v was stored after the cutoff but is in a part", k)
		}
	}
}

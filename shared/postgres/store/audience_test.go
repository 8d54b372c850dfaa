package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// TestAudienceParts: a large audience is loaded by the fan-out function in
// parts that hold every subscription stored up to the cutoff exactly once,
// a connection's subscriptions in one part; a subscription stored (or
// replaced) after the cutoff is in none; the publisher's lookup, when the
// audience's index entries reach its limit, reads no subscription and says
// so, with the cutoff. The
// parts are the ranges of AudienceBounds (runs of connections in id order)
// and, as an earlier version splits, hash shares; both hold the same.
func TestAudienceParts(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	const community, channel = "default", "8f14e45f-ceea-467f-a0e6-3f1a4a8e2f10"
	now := time.Now().Unix()
	subscribe := func(conn, sub string, pins ...string) {
		t.Helper()
		v, err := st.SubscriptionsInsert(ctx, session.NewSubscription{
			Subscription: session.Subscription{Connection: conn, Sub: sub, Pubkey: "pk", Filters: `[{"kinds":[9]}]`},
			Community:    community, Pins: pins, CreatedAt: now,
		}, store.SubscribeLimits{PerConnection: 10})
		if err != nil || v != store.Stored {
			t.Fatalf("subscribe %s/%s: %v %v", conn, sub, v, err)
		}
	}
	for i := range 40 {
		conn := fmt.Sprintf("conn-%02d", i)
		if err := st.ConnectionsInsert(ctx, session.Connection{ID: conn, Community: community, Challenge: "c", RelayURLs: []string{"ws://x"},
			ConnectedAt: now, ExpiresAt: now + 3600}, 0); err != nil {
			t.Fatal(err)
		}
		subscribe(conn, "a", channel)
		if i%4 == 0 {
			subscribe(conn, "b", channel, "") // pinned and in the any-channel bucket: one subscription
		}
	}
	// The publisher's lookup: 50 subscriptions, 60 index entries (the
	// ten "b" are indexed twice). At a limit the entries reach, it reads
	// no subscription, only that and the cutoff.
	var d *store.Deliveries
	for _, c := range []struct {
		limit, subs int
		over        bool
	}{{6, 0, true}, {60, 0, true}, {61, 50, false}, {0, 50, false}} {
		got, err := st.DeliveriesGet(ctx, community, store.DeliveryRequest{Channels: []string{channel}, Now: now, Limit: c.limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Subscriptions) != c.subs || got.Over != c.over || got.Cutoff == 0 {
			t.Fatalf("publisher's lookup at limit %d: %d subscriptions, over %v, cutoff %d; want %d, %v, > 0",
				c.limit, len(got.Subscriptions), got.Over, got.Cutoff, c.subs, c.over)
		}
		if d == nil {
			d = got
		}
	}
	bounds, err := st.AudienceListBounds(ctx, community, []string{channel}, 12)
	if err != nil {
		t.Fatal(err)
	}
	// 40 connections in runs of 12: the 12th, 24th, 36th and the last.
	if want := []string{"conn-11", "conn-23", "conn-35", "conn-39"}; !slices.Equal(bounds, want) {
		t.Fatalf("audience bounds %v, want %v", bounds, want)
	}
	subscribe("conn-00", "late", channel) // stored after the commit
	subscribe("conn-01", "a", channel)    // replaced after the commit

	// The ranges of the bounds, and the hash parts an earlier version's
	// split hands over: each holds every subscription stored by the
	// cutoff exactly once, a connection's in one share.
	shares := map[string]func(i int) ([]session.Subscription, error){
		"ranges": func(i int) ([]session.Subscription, error) {
			after := ""
			if i > 0 {
				after = bounds[i-1]
			}
			return st.AudienceListRange(ctx, community, []string{channel}, d.Cutoff, after, bounds[i], now)
		},
		"hash parts": func(i int) ([]session.Subscription, error) {
			return st.AudienceListPart(ctx, community, []string{channel}, d.Cutoff, i, len(bounds), now)
		},
	}
	for name, share := range shares {
		seen := map[[2]string]int{}
		partOf := map[string]int{}
		for p := range bounds {
			subs, err := share(p)
			if err != nil {
				t.Fatal(err)
			}
			if name == "ranges" && len(subs) > 15 { // 12 connections, a few with two subscriptions
				t.Errorf("range %d holds %d subscriptions", p, len(subs))
			}
			for _, s := range subs {
				seen[[2]string{s.Connection, s.Sub}]++
				if q, ok := partOf[s.Connection]; ok && q != p {
					t.Errorf("%s: connection %s is in shares %d and %d", name, s.Connection, q, p)
				}
				partOf[s.Connection] = p
			}
		}
		if len(seen) != 49 {
			t.Errorf("%s hold %d subscriptions, want 49 (50 stored by the cutoff, one replaced after it)", name, len(seen))
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("%s: %v is in %d shares", name, k, n)
			}
		}
		for _, k := range [][2]string{{"conn-00", "late"}, {"conn-01", "a"}} {
			if seen[k] != 0 {
				t.Errorf("%s: %v was stored after the cutoff but is in a share", name, k)
			}
		}
	}
	// Another channel's audience is the any-channel bucket alone: the "b"
	// subscriptions of the 10 connections conn-00, conn-04 … conn-36.
	if b, err := st.AudienceListBounds(ctx, community, []string{"another-channel"}, 12); err != nil || !slices.Equal(b, []string{"conn-36"}) {
		t.Errorf("bounds of the any-channel bucket: %v, %v; want [conn-36]", b, err)
	}
	if b, err := st.AudienceListBounds(ctx, "no-such-community", []string{channel}, 12); err != nil || b != nil {
		t.Errorf("bounds of no audience: %v, %v; want none", b, err)
	}
}

package fanout_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/fanout"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestCatchUpAndLiveDeliveryClaim: a subscription stored with a claiming
// window (an early-answered REQ's) gets each event once, whichever of its
// catch-up and a commit's fan-out delivers first; the catch-up applies
// live delivery's rules (an event its filters do not match, or of a
// private channel its reader cannot read, is not sent); a subscription
// past its window, or stored without one, gets a second delivery of the
// same event as any live delivery does (nothing is claimed for it).
func TestCatchUpAndLiveDeliveryClaim(t *testing.T) {
	ctx := context.Background()
	const id = "default"
	st := testkit.NewStore(t, store.Options{MaxConns: 4})
	sess := sessions.NewRegistry(sessionstest.DynamoDB(t).Store)
	rec := &recorder{posts: map[string][]string{}}
	f := fanout.New(st, sess, rec, nil, testkit.Quiet())
	ing := ingest.New(st, testkit.RelayKey(t)).WithDelivery(f.Request)
	op, reader := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddOperator(ctx, st, id, op.Pub); err != nil {
		t.Fatal(err)
	}
	publish := func(ev *nostr.Event) *ingest.Outcome {
		t.Helper()
		out, err := ing.Submit(ctx, id, op.Pub, ev)
		if err != nil || !out.Accepted {
			t.Fatalf("kind %d: %+v %v", ev.Kind, out, err)
		}
		return &out
	}
	open, private := testkit.ChannelID(), testkit.ChannelID()
	publish(op.Event(t, kinds.CreateGroup, "", nostr.Tag{"h", open}, nostr.Tag{"name", "o"}, nostr.Tag{"visibility", "open"}))
	publish(op.Event(t, kinds.CreateGroup, "", nostr.Tag{"h", private}, nostr.Tag{"name", "p"}, nostr.Tag{"visibility", "private"}))
	filters := []nostr.Filter{{Kinds: []int{kinds.Chat}, Tags: nostr.TagMap{"h": {open, private}}}}
	subscribe := func(conn string, claimsUntil int64) session.NewSubscription {
		t.Helper()
		if _, err := sess.Open(ctx, session.Connection{ID: conn, Community: id, Pubkey: reader.Pub, Challenge: "x"}); err != nil {
			t.Fatal(err)
		}
		row, err := sess.Row(id, conn, "s", reader.Pub, filters)
		if err != nil {
			t.Fatal(err)
		}
		row.ClaimsUntil = claimsUntil
		if err := sess.Put(ctx, row, sessions.DefaultLimits); err != nil {
			t.Fatal(err)
		}
		return row
	}
	count := func(conn, eventID string) int {
		t.Helper()
		n := 0
		for _, m := range rec.take(conn) {
			if strings.Contains(m, eventID) {
				n++
			}
		}
		return n
	}
	window := subscribe("window", time.Now().Add(30*time.Second).Unix())
	past := subscribe("past", time.Now().Add(-time.Second).Unix())

	// Live first, then the catch-up.
	first := publish(op.Event(t, kinds.Chat, "live first", nostr.Tag{"h", open}))
	f.Deliver(ctx, id, first.Committed, first.Delivery)
	raw := first.Committed[0].String()
	for _, sub := range []session.NewSubscription{window, past} {
		if err := f.CatchUp(ctx, id, sub.Subscription, []string{raw}); err != nil {
			t.Fatal(err)
		}
	}
	if n := count("window", first.Committed[0].ID); n != 1 {
		t.Fatalf("live, then catch-up, with a claiming window: %d copies, want 1", n)
	}
	// The catch-up claims whatever the window: "past" gets the live
	// copy (not claimed) and the catch-up's (claimed first).
	if n := count("past", first.Committed[0].ID); n != 2 {
		t.Fatalf("live, then catch-up, past the window: %d copies, want 2", n)
	}

	// The catch-up first (a fan-out that read its audience before the
	// subscription was stored, then one that ran late).
	second := publish(op.Event(t, kinds.Chat, "catch-up first", nostr.Tag{"h", open}))
	if err := f.CatchUp(ctx, id, window.Subscription, []string{second.Committed[0].String()}); err != nil {
		t.Fatal(err)
	}
	f.Deliver(ctx, id, second.Committed, second.Delivery)
	if n := count("window", second.Committed[0].ID); n != 1 {
		t.Fatalf("catch-up, then live: %d copies, want 1", n)
	}

	// Live delivery's rules: not the private channel, not another kind.
	secret := publish(op.Event(t, kinds.Chat, "secret", nostr.Tag{"h", private}))
	reaction := publish(op.Event(t, kinds.Reaction, "+", nostr.Tag{"h", open}, nostr.Tag{"e", second.Committed[0].ID}))
	if err := f.CatchUp(ctx, id, window.Subscription, []string{secret.Committed[0].String(), reaction.Committed[0].String()}); err != nil {
		t.Fatal(err)
	}
	if got := rec.take("window"); len(got) != 0 {
		t.Fatalf("catch-up of a private channel's event and an unmatched kind: %q, want nothing", got)
	}
}

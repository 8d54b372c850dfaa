package fanout_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/fanout"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// recorder is a Sender that keeps every post, by connection.
type recorder struct {
	mu    sync.Mutex
	posts map[string][]string
}

func (r *recorder) Post(_ context.Context, id string, data []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.posts[id] = append(r.posts[id], string(data))
	return nil
}

func (r *recorder) take(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.posts[id]
	delete(r.posts, id)
	return out
}

// TestRemovedMemberGetsNoLiveEvents: live delivery asks the NIP-43 gate
// of every reader, so a key that is no relay member when an event is
// delivered gets nothing, and its subscription ends with CLOSED
// restricted:, however that subscription outlived the key's membership:
// stored after the community began to enforce membership (by an instance
// whose cached flag still said open), or stored again after a 9031 removed
// the key (as a fold that collected its pending subscription before the
// removal does). Both session stores: Postgres, whose audience the commit
// reads, and DynamoDB, whose audience fan-out reads after it.
func TestRemovedMemberGetsNoLiveEvents(t *testing.T) {
	bothSessionStores(t, removedMemberGetsNoLiveEvents)
}

// bothSessionStores runs body over a fresh database with the sessions in
// Postgres, whose audience the commit reads, then in DynamoDB, whose
// audience fan-out reads after it.
func bothSessionStores(t *testing.T, body func(t *testing.T, st *store.Store, sess *sessions.Registry)) {
	t.Run("postgres", func(t *testing.T) {
		st := testkit.NewStore(t, store.Options{MaxConns: 4})
		body(t, st, sessions.NewRegistry(sessionstest.DynamoDB(t).Store))
	})
	t.Run("dynamodb", func(t *testing.T) {
		st := testkit.NewStore(t, store.Options{MaxConns: 4})
		body(t, st, sessions.NewRegistry(sessionstest.DynamoDB(t).Store))
	})
}

func removedMemberGetsNoLiveEvents(t *testing.T, st *store.Store, sess *sessions.Registry) {
	ctx := context.Background()
	const id = "default"
	reg := community.NewRegistry(st, id)
	reg.TTL = 0
	rec := &recorder{posts: map[string][]string{}}
	f := fanout.New(st, sess, rec, nil, testkit.Quiet())
	f.Door = &guard.Guard{Communities: reg, Store: st}
	ing := ingest.New(st, testkit.RelayKey(t)).WithDelivery(f.Request)
	op, alice, bob := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddOperator(ctx, st, id, op.Pub); err != nil {
		t.Fatal(err)
	}
	publish := func(k testkit.Key, ev *nostr.Event) {
		t.Helper()
		out, err := ing.Submit(ctx, id, k.Pub, ev)
		if err != nil || !out.Accepted {
			t.Fatalf("kind %d: %+v %v", ev.Kind, out, err)
		}
		f.Deliver(ctx, id, out.Committed, out.Delivery)
	}
	ch := testkit.ChannelID()
	publish(op, op.Event(t, kinds.CreateGroup, "", nostr.Tag{"h", ch}, nostr.Tag{"name", "c"}, nostr.Tag{"visibility", "open"}))
	filters := []nostr.Filter{{Kinds: []int{kinds.Chat}, Tags: nostr.TagMap{"h": {ch}}}}
	subscribe := func(k testkit.Key) string {
		t.Helper()
		conn := "conn-" + k.Pub[:8]
		if _, err := sess.Open(ctx, session.Connection{ID: conn, Community: id, Pubkey: k.Pub, Challenge: "x"}); err != nil {
			t.Fatal(err)
		}
		if err := sess.Subscribe(ctx, id, conn, "s", k.Pub, filters, sessions.DefaultLimits); err != nil {
			t.Fatal(err)
		}
		return conn
	}
	if err := st.CommunitiesSetMembershipEnforced(ctx, id, true); err != nil {
		t.Fatal(err)
	}
	publish(op, op.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", alice.Pub}))
	// Bob's REQ is stored after the switch ended the non-members'
	// subscriptions (as one met on an instance whose cached flag still
	// said "open" is).
	aliceConn, bobConn := subscribe(alice), subscribe(bob)

	publish(op, op.Event(t, kinds.Chat, "members only", nostr.Tag{"h", ch}))
	if got := rec.take(aliceConn); len(got) != 1 || !strings.Contains(got[0], "members only") {
		t.Fatalf("the member got %q, want the event", got)
	}
	got := rec.take(bobConn)
	if len(got) != 1 || !strings.HasPrefix(got[0], `["CLOSED","s","restricted: not a relay member"`) {
		t.Fatalf("a key that is no member got %q, want its subscription CLOSED and no event", got)
	}

	// 9031 removes alice; her subscription is stored again afterwards.
	publish(op, op.Event(t, kinds.RelayRemoveMember, "", nostr.Tag{"p", alice.Pub}))
	rec.take(aliceConn)
	if err := sess.Subscribe(ctx, id, aliceConn, "s", alice.Pub, filters, sessions.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	publish(op, op.Event(t, kinds.Chat, "after the removal", nostr.Tag{"h", ch}))
	got = rec.take(aliceConn)
	if len(got) != 1 || strings.Contains(got[0], "after the removal") || !strings.HasPrefix(got[0], `["CLOSED","s","restricted:`) {
		t.Fatalf("the removed member got %q, want CLOSED and no event", got)
	}
	if got := rec.take(bobConn); len(got) != 0 {
		t.Fatalf("an ended subscription got %q", got)
	}
}

// TestSubscriptionAfterTheVerdictGetsNoSecondCopy: a subscription opened
// once the publisher has its verdict (the cutoff is taken before it, as
// the write path does) reads the event as stored, so delivery, however
// late it runs, leaves it out; one opened before the commit gets it live.
// Both session stores.
func TestSubscriptionAfterTheVerdictGetsNoSecondCopy(t *testing.T) {
	bothSessionStores(t, subscriptionAfterTheVerdictGetsNoSecondCopy)
}

func subscriptionAfterTheVerdictGetsNoSecondCopy(t *testing.T, st *store.Store, sess *sessions.Registry) {
	ctx := context.Background()
	const id = "default"
	rec := &recorder{posts: map[string][]string{}}
	f := fanout.New(st, sess, rec, nil, testkit.Quiet())
	ing := ingest.New(st, testkit.RelayKey(t)).WithDelivery(f.Request)
	op := testkit.NewKey(t)
	if err := community.AddOperator(ctx, st, id, op.Pub); err != nil {
		t.Fatal(err)
	}
	ch := testkit.ChannelID()
	if out, err := ing.Submit(ctx, id, op.Pub, op.Event(t, kinds.CreateGroup, "", nostr.Tag{"h", ch}, nostr.Tag{"name", "c"}, nostr.Tag{"visibility", "open"})); err != nil || !out.Accepted {
		t.Fatalf("create: %+v %v", out, err)
	}
	filters := []nostr.Filter{{Kinds: []int{kinds.Chat}, Tags: nostr.TagMap{"h": {ch}}}}
	subscribe := func(conn string) {
		t.Helper()
		if _, err := sess.Open(ctx, session.Connection{ID: conn, Community: id, Pubkey: op.Pub, Challenge: "x"}); err != nil {
			t.Fatal(err)
		}
		if err := sess.Subscribe(ctx, id, conn, "s", op.Pub, filters, sessions.DefaultLimits); err != nil {
			t.Fatal(err)
		}
	}
	subscribe("before")
	out, err := ing.Submit(ctx, id, op.Pub, op.Event(t, kinds.Chat, "hello", nostr.Tag{"h", ch}))
	if err != nil || !out.Accepted {
		t.Fatalf("publish: %+v %v", out, err)
	}
	cutoff, err := f.Cutoff(ctx) // as the commit returned, before the verdict
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // the verdict's trip to the client and its REQ
	subscribe("after")
	f.DeliverFrom(ctx, id, out.Committed, out.Delivery, cutoff)
	if got := rec.take("before"); len(got) != 1 || !strings.Contains(got[0], out.Committed[0].ID) {
		t.Fatalf("opened before the commit: %v, want the event", got)
	}
	if got := rec.take("after"); len(got) != 0 {
		t.Fatalf("opened after the verdict: %v, want nothing (its read has the event)", got)
	}
}

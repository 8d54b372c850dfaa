package relay_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/query"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/service/relay"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

const community = "default"

// recorder is a Deliverer that remembers what it was given.
type recorder struct {
	mu    sync.Mutex
	calls [][]*nostr.Event
}

func (r *recorder) Cutoff(context.Context) (int64, error) { return 0, nil }

func (r *recorder) DeliverFrom(_ context.Context, _ string, events []*nostr.Event, _ *store.Delivery, _ int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, events)
}

// CatchUp records nothing: the catch-up of an early answer has its own
// tests (early_test.go).
func (r *recorder) CatchUp(context.Context, string, session.Subscription, []string) error {
	return nil
}

func (r *recorder) delivered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

type harness struct {
	st   *store.Store
	core *relay.Relay
	fo   *recorder
}

func newHarness(t *testing.T, limits ratelimit.Limits) *harness {
	t.Helper()
	st := testkit.NewStore(t, store.Options{MaxConns: 8})
	key := testkit.RelayKey(t)
	fo := &recorder{}
	return &harness{st: st, fo: fo, core: &relay.Relay{
		Ingest:   ingest.New(st, key),
		Reader:   query.New(st, key),
		Fanout:   fo,
		Sessions: sessions.NewRegistry(sessionstest.DynamoDB(t).Store),
		Guard:    &guard.Guard{Limiter: ratelimit.New(st, limits), Store: st, Log: testkit.Quiet()},
		Log:      testkit.Quiet(),
	}}
}

// open records connection id in the session store, as its first message
// does.
func (h *harness) open(t *testing.T, id string) {
	t.Helper()
	if _, err := h.core.Sessions.Open(context.Background(), session.Connection{ID: id, Community: community,
		RelayURLs: []string{"ws://x"}, Challenge: "ab"}); err != nil {
		t.Fatal(err)
	}
}

// read is what pk reads of channel through the use case.
func (h *harness) read(t *testing.T, pk, channel string) []json.RawMessage {
	t.Helper()
	evs, err := h.core.Read(context.Background(), relay.Caller{Community: community, Pubkey: pk},
		relay.Request{Filters: []nostr.Filter{{Tags: nostr.TagMap{"h": {channel}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func prefixOf(err error) reject.Prefix {
	if r, ok := reject.As(err); ok {
		return r.Prefix
	}
	return ""
}

// TestPublish: each step of Publish, in its order. A refusal before ingest
// is an error with its prefix that stores nothing and delivers nothing; a
// rule's refusal and a duplicate are verdicts; an accepted event is
// delivered before Publish returns.
func TestPublish(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, ratelimit.Limits{})
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	channel := testkit.ChannelID()
	create := alice.Event(t, 9007, "", nostr.Tag{"h", channel}, nostr.Tag{"name", "c"})
	if out, err := h.core.Publish(ctx, relay.Caller{Community: community, Pubkey: alice.Pub}, create); err != nil || !out.Accepted {
		t.Fatalf("create channel: %+v %v", out, err)
	}
	if h.fo.delivered() != 1 {
		t.Fatalf("the creation was delivered %d times before Publish returned, want 1", h.fo.delivered())
	}
	msg := alice.Event(t, 9, "hello", nostr.Tag{"h", channel})
	for _, tc := range []struct {
		name     string
		caller   relay.Caller
		ev       *nostr.Event
		prefix   reject.Prefix // error's prefix; "" for a verdict
		accepted bool
		message  string // verdict message prefix
	}{
		{"another key's event", relay.Caller{Community: community, Pubkey: bob.Pub}, msg, reject.Restricted, false, ""},
		{"not authenticated", relay.Caller{Community: community, Connection: "c1"}, msg, reject.AuthRequired, false, ""},
		{"a rule refuses", relay.Caller{Community: community, Pubkey: bob.Pub}, bob.Event(t, 9, "x", nostr.Tag{"h", testkit.ChannelID()}), "", false, ""},
		{"accepted", relay.Caller{Community: community, Pubkey: alice.Pub}, msg, "", true, ""},
		{"duplicate", relay.Caller{Community: community, Pubkey: alice.Pub}, msg, "", true, "duplicate: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, stored := h.fo.delivered(), len(h.read(t, alice.Pub, channel))
			out, err := h.core.Publish(ctx, tc.caller, tc.ev)
			if tc.prefix != "" {
				if prefixOf(err) != tc.prefix {
					t.Fatalf("err = %v, want %s:", err, tc.prefix)
				}
				if got := len(h.read(t, alice.Pub, channel)); got != stored || h.fo.delivered() != before {
					t.Fatalf("a refusal stored (%d → %d events) or delivered", stored, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Accepted != tc.accepted || !strings.HasPrefix(out.Message, tc.message) || (!out.Accepted && out.Message == "") {
				t.Fatalf("verdict %+v, want accepted=%v message %q…", out, tc.accepted, tc.message)
			}
			wantDelivered := before
			if tc.accepted && tc.message == "" {
				wantDelivered++
			}
			if h.fo.delivered() != wantDelivered {
				t.Fatalf("delivered %d times, want %d", h.fo.delivered()-before, wantDelivered-before)
			}
		})
	}
}

// TestLimits: past a limit the use case refuses rate-limited: with when to
// try again (counted before authentication is asked for); counters that
// cannot be reached let the call through.
func TestLimits(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, ratelimit.Limits{ReadsPerMinute: 1, MessagesPerMinute: 2})
	alice := testkit.NewKey(t)
	c := relay.Caller{Community: community, Pubkey: alice.Pub}
	q := relay.Request{Body: []byte(`[{"kinds":[9],"limit":1}]`)}
	if _, err := h.core.Read(ctx, c, q); err != nil {
		t.Fatal(err)
	}
	_, err := h.core.Count(ctx, c, q)
	if prefixOf(err) != reject.RateLimited || reject.Map(err).RetryAfter <= 0 {
		t.Fatalf("second read: %v (%+v), want rate-limited: with Retry-After", err, reject.Map(err))
	}
	anon := relay.Caller{Community: community, Connection: "conn-1"}
	for i, want := range []reject.Prefix{reject.AuthRequired, reject.AuthRequired, reject.RateLimited} {
		if _, err := h.core.Count(ctx, anon, relay.Request{Filters: []nostr.Filter{{Kinds: []int{9}}}}); prefixOf(err) != want {
			t.Fatalf("message %d of an unauthenticated connection: %v, want %s:", i+1, err, want)
		}
	}

	// Fail open: a limiter whose database is closed lets the call through.
	down := testkit.NewStore(t, store.Options{MaxConns: 1})
	down.Close()
	h.core.Guard.Limiter = ratelimit.New(down, ratelimit.Limits{ReadsPerMinute: 1})
	for i := 0; i < 2; i++ {
		if _, err := h.core.Read(ctx, c, q); err != nil {
			t.Fatalf("read %d with unreachable counters: %v", i+1, err)
		}
	}
}

// newSocket is a harness with a channel holding one message and c, its
// owner authenticated on connection "conn".
func newSocket(t *testing.T) (h *harness, c relay.Caller, channel string) {
	t.Helper()
	ctx := context.Background()
	h = newHarness(t, ratelimit.Limits{})
	alice := testkit.NewKey(t)
	channel = testkit.ChannelID()
	owner := relay.Caller{Community: community, Pubkey: alice.Pub}
	for _, ev := range []*nostr.Event{
		alice.Event(t, 9007, "", nostr.Tag{"h", channel}, nostr.Tag{"name", "c"}),
		alice.Event(t, 9, "one", nostr.Tag{"h", channel}),
	} {
		if out, err := h.core.Publish(ctx, owner, ev); err != nil || !out.Accepted {
			t.Fatalf("publish: %+v %v", out, err)
		}
	}
	if _, err := h.core.Sessions.Open(ctx, session.Connection{ID: "conn", Community: community, RelayURLs: []string{"ws://x"}, Challenge: "ab"}); err != nil {
		t.Fatal(err)
	}
	return h, relay.Caller{Community: community, Pubkey: alice.Pub, Connection: "conn"}, channel
}

// TestSubscriptionLifecycle: a REQ stores its subscription before it reads
// (so an event committed meanwhile is delivered live), answers the stored
// events, and CLOSE ends it; a search is one-shot and ends a live
// subscription of the same id.
func TestSubscriptionLifecycle(t *testing.T) {
	ctx := context.Background()
	h, c, channel := newSocket(t)
	live := func(sub string) bool {
		t.Helper()
		subs, err := h.core.Sessions.SubscriptionsByKey(ctx, community, [][2]string{{"conn", sub}})
		if err != nil {
			t.Fatal(err)
		}
		return len(subs) == 1
	}
	if _, err := h.core.Subscribe(ctx, relay.Caller{Community: community, Connection: "conn"},
		relay.Request{Sub: "s", Filters: []nostr.Filter{{Kinds: []int{9}}}}); prefixOf(err) != reject.AuthRequired || live("s") {
		t.Fatalf("REQ before AUTH: %v (stored: %v), want auth-required: and nothing stored", err, live("s"))
	}
	evs, err := h.core.Subscribe(ctx, c, relay.Request{Sub: "s", Filters: []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {channel}}}}})
	if err != nil || len(evs) != 1 || !live("s") {
		t.Fatalf("REQ: %d events, %v, stored %v; want the one message and a live subscription", len(evs), err, live("s"))
	}
	if _, err := h.core.Subscribe(ctx, c, relay.Request{Sub: "s", Filters: []nostr.Filter{{Kinds: []int{9}, Search: "one"}}}); err != nil || live("s") {
		t.Fatalf("search REQ: %v, stored %v; want the live one of its id ended", err, live("s"))
	}
	if _, err := h.core.Subscribe(ctx, c, relay.Request{Sub: "t", Filters: []nostr.Filter{{Kinds: []int{9}}}}); err != nil || !live("t") {
		t.Fatalf("REQ t: %v", err)
	}
	if err := h.core.Close(ctx, c, relay.Request{Sub: "t"}); err != nil || live("t") {
		t.Fatalf("CLOSE: %v, stored %v", err, live("t"))
	}
	if err := h.core.Close(ctx, c, relay.Request{Sub: "never"}); err != nil {
		t.Fatalf("CLOSE of an unknown id: %v", err)
	}
}

// heldDeliverer is a Deliverer whose delivery waits, as for a recipient
// that never takes its messages, until released.
type heldDeliverer struct {
	started, release, finished chan struct{}
}

func (d *heldDeliverer) Cutoff(context.Context) (int64, error) { return 0, nil }

func (d *heldDeliverer) DeliverFrom(context.Context, string, []*nostr.Event, *store.Delivery, int64) {
	close(d.started)
	<-d.release
	close(d.finished)
}

func (d *heldDeliverer) CatchUp(context.Context, string, session.Subscription, []string) error {
	panic("relay_test: catch-up with the sessions in Postgres")
}

// TestAnswerBeforeDelivery: PublishThenDeliver (WebSocket EVENT) gives the
// publisher its verdict while delivery is still held by a recipient that
// does not read (delivery runs only when the transport calls deliver), and
// deliver returns only once delivery ended.
func TestAnswerBeforeDelivery(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, ratelimit.Limits{})
	alice := testkit.NewKey(t)
	channel := testkit.ChannelID()
	if out, err := h.core.Publish(ctx, relay.Caller{Community: community, Pubkey: alice.Pub},
		alice.Event(t, 9007, "", nostr.Tag{"h", channel}, nostr.Tag{"name", "c"})); err != nil || !out.Accepted {
		t.Fatalf("create channel: %+v %v", out, err)
	}
	d := &heldDeliverer{started: make(chan struct{}), release: make(chan struct{}), finished: make(chan struct{})}
	h.core.Fanout = d
	answered := make(chan relay.Published, 1)
	returned := make(chan error, 1)
	go func() {
		p, deliver, err := h.core.PublishThenDeliver(ctx, relay.Caller{Community: community, Pubkey: alice.Pub},
			alice.Event(t, 9, "hello", nostr.Tag{"h", channel}))
		if err != nil {
			returned <- err
			return
		}
		answered <- p
		deliver(ctx)
		returned <- nil
	}()
	got := <-answered
	if !got.Accepted {
		t.Fatalf("verdict %+v, want accepted", got)
	}
	select {
	case <-d.finished:
		t.Fatal("delivery had ended before the answer")
	case err := <-returned:
		t.Fatalf("returned (%v) while delivery was held", err)
	default:
	}
	<-d.started
	close(d.release)
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
	<-d.finished
}

// TestConcurrentREQsHoldTheLimit: REQs sent at once on one socket, each a
// new subscription id, are stored and answered exactly up to the limit
// (the subscription stored before the read); every other gets
// restricted: and no events (the key's limit, three times the
// connection's, refuses none: a client is never refused under its
// limits, however its REQs race), and a REQ whose filters are invalid
// ends a live subscription of its id rather than leave it under a CLOSED
// id.
func TestConcurrentREQsHoldTheLimit(t *testing.T) {
	ctx := context.Background()
	h, c, channel := newSocket(t)
	const sent = 200
	answered := make([]int, sent)
	errs := make([]error, sent)
	testkit.AtOnce(sent, func(i int) {
		evs, err := h.core.Subscribe(ctx, c, relay.Request{Sub: "s" + strconv.Itoa(i),
			Filters: []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {channel}}}}})
		answered[i], errs[i] = len(evs), err
	})
	served := 0
	for i, err := range errs {
		switch {
		case err == nil && answered[i] == 1:
			served++
		case prefixOf(err) == reject.Restricted && answered[i] == 0:
		default:
			t.Fatalf("REQ %d: %d events, %v; want the message or restricted:", i, answered[i], err)
		}
	}
	subs, err := h.core.Sessions.SubscriptionsByKey(ctx, community, func() [][2]string {
		keys := make([][2]string, sent)
		for i := range keys {
			keys[i] = [2]string{"conn", "s" + strconv.Itoa(i)}
		}
		return keys
	}())
	if err != nil {
		t.Fatal(err)
	}
	if served != relayinfo.MaxSubscriptions || len(subs) != relayinfo.MaxSubscriptions {
		t.Fatalf("%d REQs at once: %d served, %d stored; want exactly %d", sent, served, len(subs), relayinfo.MaxSubscriptions)
	}
	if _, err := h.core.Subscribe(ctx, c, relay.Request{Sub: "over",
		Filters: []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {channel}}}}}); prefixOf(err) != reject.Restricted {
		t.Fatalf("REQ past the limit: %v, want restricted:", err)
	}
	live := subs[0].Sub
	if _, err := h.core.Subscribe(ctx, c, relay.Request{Sub: live, Filters: []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {channel}}, Limit: -1}}}); prefixOf(err) != reject.Invalid {
		t.Fatalf("REQ with invalid filters: %v, want invalid:", err)
	}
	if left, err := h.core.Sessions.SubscriptionsByKey(ctx, community, [][2]string{{"conn", live}}); err != nil || len(left) != 0 {
		t.Fatalf("subscription %s after its invalid REQ: %v %v, want ended", live, left, err)
	}
}

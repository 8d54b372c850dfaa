package relay_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/fanout"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/query"
	"github.com/buzzrelay/relay/shared/service/relay"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// gated is the DynamoDB API with the writes that store a subscription
// (its item, its audience entries) held while hold is set, until release
// is closed: a session store slower than the read. Each write it holds
// is reported on held, when the test gave it one.
type gated struct {
	ddbsessions.API
	hold    atomic.Bool
	release chan struct{}
	held    chan struct{}
	// tombReads counts the reads of CLOSE tombstones.
	tombReads atomic.Int64
}

func (g *gated) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if pk, ok := in.Key["pk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(pk.Value, "closed\x1f") {
		g.tombReads.Add(1)
	}
	return g.API.GetItem(ctx, in, opts...)
}

func (g *gated) wait(ctx context.Context) {
	if g.hold.Load() {
		if g.held != nil {
			select {
			case g.held <- struct{}{}:
			default:
			}
		}
		select {
		case <-g.release:
		case <-ctx.Done():
		}
	}
}

func (g *gated) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if sk, ok := in.Item["sk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(sk.Value, "sub\x1f") {
		g.wait(ctx)
	}
	return g.API.PutItem(ctx, in, opts...)
}

func (g *gated) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	for _, ws := range in.RequestItems {
		for _, w := range ws {
			if w.PutRequest != nil {
				g.wait(ctx)
				return g.API.BatchWriteItem(ctx, in, opts...)
			}
		}
	}
	return g.API.BatchWriteItem(ctx, in, opts...)
}

// posts records what is posted to each connection.
type posts struct {
	mu sync.Mutex
	m  map[string][]string
}

func (p *posts) Post(_ context.Context, id string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[id] = append(p.m[id], string(data))
	return nil
}

// count is how many messages to connection for subscription sub carry
// event id.
func (p *posts) count(conn, sub, id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, m := range p.m[conn] {
		if strings.HasPrefix(m, fmt.Sprintf(`["EVENT",%q,`, sub)) && strings.Contains(m, id) {
			n++
		}
	}
	return n
}

// earlyRelay is the use cases with the sessions in DynamoDB (through
// api), live delivery posting to p.
func earlyRelay(t *testing.T, st *store.Store, sess *sessions.Registry, p *posts) *relay.Relay {
	t.Helper()
	key := testkit.RelayKey(t)
	f := fanout.New(st, sess, p, nil, testkit.Quiet())
	return &relay.Relay{Ingest: ingest.New(st, key).WithDelivery(f.Request), Reader: query.New(st, key), Fanout: f,
		Sessions: sess, Log: testkit.Quiet()}
}

// gatedHarness is the use cases over sessions in DynamoDB whose
// subscription writes the test holds (gated), one connection of alice's
// and an open channel of hers.
type gatedHarness struct {
	core  *relay.Relay
	g     *gated
	impl  sessionstest.Impl
	p     *posts
	alice testkit.Key
	c     relay.Caller
	ch    string
}

func newGatedHarness(t *testing.T) *gatedHarness {
	t.Helper()
	ctx := context.Background()
	st := testkit.NewStore(t, store.Options{MaxConns: 8})
	h := &gatedHarness{impl: sessionstest.DynamoDB(t), p: &posts{m: map[string][]string{}}, alice: testkit.NewKey(t), ch: testkit.ChannelID()}
	h.g = &gated{API: h.impl.API, release: make(chan struct{})}
	sess := sessions.NewRegistry(ddbsessions.New(h.g, h.impl.Table))
	h.core = earlyRelay(t, st, sess, h.p)
	conn, err := sess.Open(ctx, session.Connection{ID: "conn", Community: community, Pubkey: h.alice.Pub, Challenge: "x"})
	if err != nil {
		t.Fatal(err)
	}
	h.c = relay.Caller{Community: community, Pubkey: h.alice.Pub, Connection: "conn", Session: &conn}
	h.publish(t, h.alice.Event(t, kinds.CreateGroup, "", nostr.Tag{"h", h.ch}, nostr.Tag{"name", "c"}, nostr.Tag{"visibility", "open"}))
	return h
}

// publish publishes ev as alice and delivers it.
func (h *gatedHarness) publish(t *testing.T, ev *nostr.Event) {
	t.Helper()
	ctx := context.Background()
	out, deliver, err := h.core.PublishThenDeliver(ctx, h.c, ev)
	if err != nil || !out.Accepted {
		t.Fatalf("kind %d: %+v %v", ev.Kind, out, err)
	}
	deliver(ctx)
}

// early sends a REQ whose subscription's store is held, and returns what
// follows its answer; it fails when the answer waited for the store.
func (h *gatedHarness) early(t *testing.T, sub string, filters []nostr.Filter) (int, func(context.Context) error) {
	t.Helper()
	h.g.hold.Store(true)
	type answer struct {
		evs   int
		after func(context.Context) error
		err   error
	}
	got := make(chan answer, 1)
	go func() {
		evs, after, err := h.core.SubscribeThen(context.Background(), h.c, relay.Request{Sub: sub, Filters: filters})
		got <- answer{len(evs), after, err}
	}()
	select {
	case a := <-got:
		if a.err != nil {
			t.Fatalf("early answer: %v", a.err)
		}
		return a.evs, a.after
	case <-time.After(20 * time.Second):
		t.Fatal("the REQ waited for its subscription's store")
	}
	return 0, nil
}

// chatSubscribed stores sub, a REQ for the channel's chat, and returns
// its filters.
func (h *gatedHarness) chatSubscribed(t *testing.T, sub string) []nostr.Filter {
	t.Helper()
	chat := []nostr.Filter{{Kinds: []int{kinds.Chat}, Tags: nostr.TagMap{"h": {h.ch}}, Limit: 50}}
	if _, err := h.core.Subscribe(context.Background(), h.c, relay.Request{Sub: sub, Filters: chat}); err != nil {
		t.Fatal(err)
	}
	return chat
}

// release lets the held writes land.
func (h *gatedHarness) release() {
	h.g.hold.Store(false)
	close(h.g.release)
}

// TestEarlyAnswerCatchesUp: with the sessions in DynamoDB, a live REQ for
// the newest events is answered while its subscription is still being
// stored (the store held here), once the registry knows the connection
// has room. An event committed in between, whose delivery ran before
// the subscription was stored, reaches it once it is stored (the
// catch-up), once; so does the next event, delivered live.
func TestEarlyAnswerCatchesUp(t *testing.T) {
	ctx := context.Background()
	h := newGatedHarness(t)
	core, c, alice, ch, p := h.core, h.c, h.alice, h.ch, h.p
	publish := func(ev *nostr.Event) { t.Helper(); h.publish(t, ev) }
	stored := alice.Event(t, kinds.Chat, "stored", nostr.Tag{"h", ch})
	publish(stored)
	filters := []nostr.Filter{{Kinds: []int{kinds.Chat}, Tags: nostr.TagMap{"h": {ch}}, Limit: 50}}
	// The connection's first REQ waits for the store, which reports its
	// counts: the next one may go early.
	if _, err := core.Subscribe(ctx, c, relay.Request{Sub: "first", Filters: filters}); err != nil {
		t.Fatal(err)
	}

	n, after := h.early(t, "early", filters)
	if n != 1 {
		t.Fatalf("early answer: %d events, want the stored one", n)
	}
	between := alice.Event(t, kinds.Chat, "between the read and the store", nostr.Tag{"h", ch})
	publish(between)
	if n := p.count("conn", "early", between.ID); n != 0 {
		t.Fatalf("delivered %d times before the subscription was stored", n)
	}
	h.release()
	if err := after(ctx); err != nil {
		t.Fatal(err)
	}
	if n := p.count("conn", "early", between.ID); n != 1 {
		t.Fatalf("the event committed between the read and the store: %d copies, want 1", n)
	}
	if n := p.count("conn", "first", between.ID); n != 1 {
		t.Fatalf("the connection's other subscription: %d copies, want 1", n)
	}
	next := alice.Event(t, kinds.Chat, "after", nostr.Tag{"h", ch})
	publish(next)
	if n := p.count("conn", "early", next.ID); n != 1 {
		t.Fatalf("the next event: %d copies, want 1", n)
	}
	if n := p.count("conn", "early", stored.ID); n != 0 {
		t.Fatalf("the event the read answered was delivered live %d times too", n)
	}
}

// TestEarlyAnswerRefusedAfterEOSE: an instance that admitted an early
// answer on counts it learnt, while another instance filled the
// connection, gets the store's refusal after the answer: after returns
// restricted: (the transport's CLOSED) and nothing of the REQ is stored.
func TestEarlyAnswerRefusedAfterEOSE(t *testing.T) {
	ctx := context.Background()
	st := testkit.NewStore(t, store.Options{MaxConns: 8})
	impl := sessionstest.DynamoDB(t)
	a := sessions.NewRegistry(ddbsessions.New(impl.API, impl.Table))
	b := sessions.NewRegistry(ddbsessions.New(impl.API, impl.Table))
	core := earlyRelay(t, st, a, &posts{m: map[string][]string{}})
	alice := testkit.NewKey(t)
	conn, err := a.Open(ctx, session.Connection{ID: "conn", Community: community, Pubkey: alice.Pub, Challenge: "x"})
	if err != nil {
		t.Fatal(err)
	}
	c := relay.Caller{Community: community, Pubkey: alice.Pub, Connection: "conn", Session: &conn}
	filters := []nostr.Filter{{Kinds: []int{kinds.Chat}, Authors: []string{alice.Pub}, Limit: 10}}
	if _, err := core.Subscribe(ctx, c, relay.Request{Sub: "first", Filters: filters}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < relayinfo.MaxSubscriptions; i++ {
		if err := b.Subscribe(ctx, community, "conn", fmt.Sprintf("other-%d", i), alice.Pub, filters, sessions.DefaultLimits); err != nil {
			t.Fatal(err)
		}
	}
	_, after, err := core.SubscribeThen(ctx, c, relay.Request{Sub: "over", Filters: filters})
	if err != nil {
		t.Fatalf("the early answer: %v", err)
	}
	if err := after(ctx); prefixOf(err) != reject.Restricted {
		t.Fatalf("after the answer: %v, want restricted:", err)
	}
	subs, err := impl.Store.SubscriptionsByKey(ctx, community, [][2]string{{"conn", "over"}}, time.Now().Unix())
	if err != nil || len(subs) != 0 {
		t.Fatalf("the refused subscription: %v %v, want none stored", subs, err)
	}
	// Now known full here: the next REQ waits for the store's verdict,
	// refused before any answer.
	if _, _, err := core.SubscribeThen(ctx, c, relay.Request{Sub: "again", Filters: filters}); prefixOf(err) != reject.Restricted {
		t.Fatalf("a REQ past the limit, known here: %v, want restricted:", err)
	}
}

// TestCloseOnEOSEBeforeTheStore: a CLOSE sent on EOSE (a one-shot read)
// that reaches the session store before an early answer's subscription
// does leaves no live subscription behind: no event reaches the closed
// id, and its place in the connection's limit is free again. Whether the
// CLOSE comes before the store began (the REQ then stores nothing) or
// while it lands (what it stored is withdrawn).
func TestCloseOnEOSEBeforeTheStore(t *testing.T) {
	for _, whileStoring := range []bool{false, true} {
		t.Run(map[bool]string{false: "before-the-store", true: "while-it-lands"}[whileStoring], func(t *testing.T) {
			closeOnEOSE(t, whileStoring)
		})
	}
}

func closeOnEOSE(t *testing.T, whileStoring bool) {
	ctx := context.Background()
	h := newGatedHarness(t)
	core, c, alice, ch, p := h.core, h.c, h.alice, h.ch, h.p
	publish := func(ev *nostr.Event) { t.Helper(); h.publish(t, ev) }
	filters := []nostr.Filter{{Kinds: []int{kinds.Chat}, Tags: nostr.TagMap{"h": {ch}}, Limit: 50}}
	if _, err := core.Subscribe(ctx, c, relay.Request{Sub: "first", Filters: filters}); err != nil {
		t.Fatal(err)
	}
	h.g.held = make(chan struct{}, 1)
	_, after := h.early(t, "once", filters)
	var done chan error
	if whileStoring {
		done = make(chan error, 1)
		go func() { done <- after(ctx) }()
		select {
		case <-h.g.held:
		case <-time.After(20 * time.Second):
			t.Fatal("the subscription's store never began")
		}
	}
	if err := core.Close(ctx, c, relay.Request{Sub: "once"}); err != nil {
		t.Fatal(err)
	}
	if !whileStoring {
		select {
		case <-h.g.held:
			t.Fatal("a REQ closed before its store began was stored")
		default:
		}
	}
	h.release()
	if whileStoring {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	} else if err := after(ctx); err != nil {
		t.Fatal(err)
	}
	ev := alice.Event(t, kinds.Chat, "after the CLOSE", nostr.Tag{"h", ch})
	publish(ev)
	if n := p.count("conn", "once", ev.ID); n != 0 {
		t.Fatalf("the closed id got %d copies of a later event", n)
	}
	if n := p.count("conn", "first", ev.ID); n != 1 {
		t.Fatalf("the live subscription got %d copies, want 1", n)
	}
	if subs, err := h.impl.Store.SubscriptionsByKey(ctx, community, [][2]string{{"conn", "once"}}, time.Now().Unix()); err != nil || len(subs) != 0 {
		t.Fatalf("the closed id: %v %v, want nothing stored", subs, err)
	}
	// Its place in the connection's limit is free: the limit's worth of
	// other ids fit beside "first".
	for i := 1; i < relayinfo.MaxSubscriptions; i++ {
		if _, err := core.Subscribe(ctx, c, relay.Request{Sub: fmt.Sprintf("more-%d", i), Filters: filters}); err != nil {
			t.Fatalf("subscription %d of %d: %v", i+1, relayinfo.MaxSubscriptions, err)
		}
	}
}

// TestEarlyAnswerReplacingAStoredId: a REQ whose id names a stored
// subscription replaces it; answered early, it is stored without waiting
// for a CLOSE (no tombstone read before its store), so the old filters do
// not outlive its EOSE by the grace: once stored, an event only the old
// filters match no longer reaches the id, one the new match does.
func TestEarlyAnswerReplacingAStoredId(t *testing.T) {
	ctx := context.Background()
	h := newGatedHarness(t)
	alice, ch, p := h.alice, h.ch, h.p
	h.chatSubscribed(t, "x")
	reactions := []nostr.Filter{{Kinds: []int{kinds.Reaction}, Tags: nostr.TagMap{"h": {ch}}, Limit: 50}}
	h.g.held = make(chan struct{}, 1)
	_, after := h.early(t, "x", reactions)
	done := make(chan error, 1)
	go func() { done <- after(ctx) }()
	select {
	case <-h.g.held:
	case <-time.After(20 * time.Second):
		t.Fatal("the replacing subscription's store never began")
	}
	if n := h.g.tombReads.Load(); n != 0 {
		t.Fatalf("%d tombstone reads before a replacing REQ's store, want none (it waits for no CLOSE)", n)
	}
	h.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	old := alice.Event(t, kinds.Chat, "only the old filters match", nostr.Tag{"h", ch})
	h.publish(t, old)
	if n := p.count("conn", "x", old.ID); n != 0 {
		t.Fatalf("the replaced filters still delivered %d copies", n)
	}
	r := alice.Event(t, kinds.Reaction, "+", nostr.Tag{"h", ch}, nostr.Tag{"e", old.ID})
	h.publish(t, r)
	if n := p.count("conn", "x", r.ID); n != 1 {
		t.Fatalf("the new filters: %d copies, want 1", n)
	}
}

// TestEarlyAnswerSupersededBeforeItsStore: an early answer still waiting
// for its store when a later REQ of the same id comes (here one with a
// since, stored at once) is never stored: the later REQ's filters hold
// the id, and nothing only the first one's match reaches it.
func TestEarlyAnswerSupersededBeforeItsStore(t *testing.T) {
	ctx := context.Background()
	h := newGatedHarness(t)
	core, c, alice, ch, p := h.core, h.c, h.alice, h.ch, h.p
	chat := h.chatSubscribed(t, "first")
	_, after := h.early(t, "x", chat)
	h.release()
	since := nostr.Now() - 60
	reactions := []nostr.Filter{{Kinds: []int{kinds.Reaction}, Tags: nostr.TagMap{"h": {ch}}, Since: &since}}
	if _, err := core.Subscribe(ctx, c, relay.Request{Sub: "x", Filters: reactions}); err != nil {
		t.Fatal(err)
	}
	if err := after(ctx); err != nil {
		t.Fatal(err)
	}
	subs, err := h.impl.Store.SubscriptionsByKey(ctx, community, [][2]string{{"conn", "x"}}, time.Now().Unix())
	if err != nil || len(subs) != 1 || !strings.Contains(subs[0].Filters, fmt.Sprint(kinds.Reaction)) {
		t.Fatalf("the id's stored subscription: %+v %v, want the later REQ's", subs, err)
	}
	ev := alice.Event(t, kinds.Chat, "only the superseded filters match", nostr.Tag{"h", ch})
	h.publish(t, ev)
	if n := p.count("conn", "x", ev.ID); n != 0 {
		t.Fatalf("the superseded filters delivered %d copies", n)
	}
	if n := p.count("conn", "first", ev.ID); n != 1 {
		t.Fatalf("the other subscription: %d copies, want 1", n)
	}
}

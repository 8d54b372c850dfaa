// Package fanout is live delivery: newly committed events go to the
// subscriptions that match them (stored by shared/service/sessions, indexed
// by the channels their filters pin), through the API Gateway @connections
// management API (wire.Sender). It keeps no session: it reads the
// audience, matches, posts, and ends only what delivery itself ends (a
// subscription whose reader lost access, a connection that is gone). It
// knows no AWS type; shared/transport/apigw provides the Sender.
//
// # Where fan-out runs: after the commit, inline or in the fan-out function
//
// The function that committed the event (ws-message for a WebSocket EVENT,
// ingest for POST /events) calls Deliver before it answers, so that a
// subscription opened after the OK gets the event as stored only. An
// audience of at most InlineMax subscriptions is posted to inline, in that
// invocation: Lambda freezes an instance once it returned, so delivery
// cannot run in the background of the answer, and inline is one hop less
// than anything else. A larger audience is handed to the fan-out function
// (functions/fanout) by one asynchronous invocation (dispatch.go): the
// committing function reads the audience from the session store and waits
// for one Invoke, not for the posts; that run splits the audience and the
// parts are delivered in parallel. Postgres LISTEN/NOTIFY cannot drive
// Lambda (frozen between invocations), so subscriptions live in the
// session store (DynamoDB, shared/service/sessions) and matching reads
// them.
//
// Its price: a VPC Lambda cannot reach execute-api without egress (a
// WebSocket API cannot be reached through an execute-api VPC endpoint), so
// ingest, ws-message and fanout need a NAT gateway (or to run outside the
// VPC with a public database endpoint); ingest and ws-message also call the
// Lambda API (a lambda interface endpoint or the same egress).
//
// # Matching
//
// A subscription is indexed by the channels its filters pin (#h, or #d on
// filters of channel-state kinds only) plus one "any channel" bucket for
// filters that pin none. An event of channel C looks up the rows of C and of
// the bucket, never every subscription, then matches each candidate filter
// precisely (go-nostr's Filter.Matches; #h through the event's stored channel,
// so reactions, edits and deletions match their target's channel) and
// re-checks that the subscriber may still read C (and that a filter names a
// system channel it reads, NIP-CL). A subscription pinned to a channel its
// reader can no longer read ends with CLOSED restricted:. Every reader also
// passes the door again (Door, shared/service/guard): one the NIP-43 gate
// refuses now, or of a community no longer served, gets no event and each
// of its subscriptions ends with CLOSED and the door's refusal.
package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/service/wire"
)

// Summarizer builds the relay-signed 39005 thread summary of a root (nil
// when the root is unknown); shared/service/query implements it.
type Summarizer interface {
	ThreadSummary(ctx context.Context, community, rootID string) (*nostr.Event, error)
}

// DefaultConcurrency bounds the posts in flight of one Deliver call: the
// connections posted to at once (each one's messages go in order).
const DefaultConcurrency = wire.PostsInFlight

// Fanout delivers committed events to live subscriptions. Safe for
// concurrent use.
type Fanout struct {
	// Store reads what delivery needs (the audience, access); Sessions
	// ends what delivery ends; Sender posts.
	Store    *store.Store
	Sessions *sessions.Registry
	Sender   wire.Sender
	// Summaries, when set, makes a reply or a reply's deletion push a fresh
	// 39005 for its root.
	Summaries   Summarizer
	Log         *slog.Logger
	Concurrency int
	// PostTimeout bounds each post (wire.PostTimeout when 0).
	PostTimeout time.Duration
	// Async, when set, takes delivery to more than InlineMax subscriptions
	// off the committing invocation: the audience goes to the fan-out
	// function, which splits it in parts of about BatchSize subscriptions
	// and invokes itself (Async too) for the others (dispatch.go).
	Async     Invoker
	InlineMax int
	BatchSize int
	// Door, when set, is asked about every delivery's readers
	// (shared/service/guard.Guard.Readers): a reader it refuses now (the
	// NIP-43 gate: a member removed, or membership switched on; the
	// community no longer served) gets nothing, and each of its
	// subscriptions ends with CLOSED carrying the refusal.
	Door Door
	// Push, when set, is told of every commit (shared/service/push's
	// Committed: one asynchronous hand-off to the push sender when the
	// community has push subscriptions; nothing is matched here).
	Push Committer
	// Workflows, when set, is told of every commit too (shared/service/
	// workflow's hand-off to the runner).
	Workflows Committer
}

// Committer hears of each commit's events before live delivery.
type Committer interface {
	Committed(ctx context.Context, community string, events []*nostr.Event)
}

// Door is the door's verdict on the readers of one delivery: the keys it
// refuses now, each with its refusal (nil: none).
type Door interface {
	Readers(ctx context.Context, community string, pubkeys []string) (map[string]*reject.Error, error)
}

// New wires fan-out over st and the sessions of reg; sum may be nil.
func New(st *store.Store, reg *sessions.Registry, s wire.Sender, sum Summarizer, log *slog.Logger) *Fanout {
	return &Fanout{Store: st, Sessions: reg, Sender: s, Summaries: sum, Log: log, Concurrency: DefaultConcurrency}
}

// now is the sessions' clock: a subscription is live until its
// connection expires.
func (f *Fanout) now() time.Time { return f.Sessions.Now() }

// item is one event to deliver with what the rules need about it.
type item struct {
	ev      *nostr.Event
	raw     string
	channel string // "" outside any channel
	system  bool   // channel is a system channel
	// summary marks a relay-signed 39005 thread summary: it goes only to
	// filters that ask for its kind.
	summary bool
}

// Deliver sends events (as committed, client event first) to every live
// subscription of community that matches them and whose reader may read
// them. What delivery needs is loaded by the commit when it carried
// Request(events) (at, from store.Tx.DeliveriesGetAtCommit), else here. It
// returns when all posts are done; failures are logged, a gone connection
// is removed.
func (f *Fanout) Deliver(ctx context.Context, community string, events []*nostr.Event, at *store.Delivery) {
	f.DeliverFrom(ctx, community, events, at, 0)
}

// Cutoff is a commit's position among the subscriptions
// (session.Store.Cutoff), to take as the commit returned, before its
// verdict is sent (DeliverFrom).
func (f *Fanout) Cutoff(ctx context.Context) (int64, error) {
	cutoff, err := f.Sessions.Cutoff(ctx)
	if err != nil {
		return 0, fmt.Errorf("fanout: cutoff: %w", err)
	}
	return cutoff, nil
}

// DeliverFrom is Deliver up to cutoff (Cutoff, taken before the verdict
// was sent; 0: taken now): a subscription its publisher, or anyone told
// of the commit, opened after the verdict reads the event as stored, and
// is not sent it a second time.
func (f *Fanout) DeliverFrom(ctx context.Context, community string, events []*nostr.Event, at *store.Delivery, cutoff int64) {
	if len(events) == 0 {
		return
	}
	if f.Push != nil {
		f.Push.Committed(ctx, community, events)
	}
	if f.Workflows != nil {
		f.Workflows.Committed(ctx, community, events)
	}
	start := time.Now()
	var d *store.Deliveries
	var err error
	if at != nil {
		d, err = at.Deliveries(ctx)
	} else {
		d, err = f.Store.DeliveriesGet(ctx, community, f.Request(events))
	}
	if err != nil {
		f.Log.ErrorContext(ctx, "fanout: load events", "community", community, "err", err)
		return
	}
	items, err := f.items(ctx, community, events, d)
	if err != nil {
		f.Log.ErrorContext(ctx, "fanout: load events", "community", community, "err", err)
		return
	}
	if len(items) == 0 {
		return
	}
	// The audience is read from the session store, after the commit.
	cands, cutoff, over, err := f.audienceAfterCommit(ctx, community, items, cutoff)
	if err != nil {
		f.Log.ErrorContext(ctx, "fanout: audience", "community", community, "err", err)
		return
	}
	if f.Async != nil && over {
		f.handOff(ctx, community, items, cutoff)
		return
	}
	if len(cands) == 0 {
		return
	}
	conns, sent := f.deliverTo(ctx, community, items, cands)
	f.Log.DebugContext(ctx, "fanout: delivered", "community", community, "events", len(items),
		"candidates", len(cands), "connections", conns, "messages", sent, "took_ms", time.Since(start).Milliseconds())
}

// Request is what delivery of events (as committed, client event first)
// needs loaded: the stored events, the deletion targets among their e tags
// (for the thread roots of deleted replies), the channels of ephemeral
// events (never stored: their own h tag names it), and the candidate
// (the audience is the session store's to read, after the commit:
// audienceAfterCommit).
func (f *Fanout) Request(events []*nostr.Event) store.DeliveryRequest {
	var r store.DeliveryRequest
	for _, ev := range events {
		if kinds.Ephemeral(ev.Kind) {
			if ch, ok := nip29.ChannelTag(ev.Tags); ok {
				r.Channels = append(r.Channels, ch)
			}
			continue
		}
		r.IDs = append(r.IDs, ev.ID)
		if kinds.Deletes(ev.Kind) {
			r.Targets = append(r.Targets, filter.TagValues(ev.Tags, "e")...)
		}
	}
	return r
}

// deliverTo re-checks access of every candidate's reader, matches and
// posts; it returns the connections posted to and the messages sent.
func (f *Fanout) deliverTo(ctx context.Context, community string, items []*item, cands []candidate) (int, int) {
	if err := decode(cands); err != nil {
		f.Log.ErrorContext(ctx, "fanout: subscriptions", "community", community, "err", err)
		return 0, 0
	}
	// NIP-40: an event that expired on its way (a handed-off batch, a
	// retry) is delivered to nobody, as no read serves it.
	items = unexpired(items, f.now().Unix())
	jobs := map[string]*job{}
	var order []string
	jobOf := func(conn string) *job {
		j := jobs[conn]
		if j == nil {
			j = &job{connection: conn}
			jobs[conn] = j
			order = append(order, conn)
		}
		return j
	}
	cands, refused, err := f.admitted(ctx, community, cands)
	if err != nil {
		f.Log.ErrorContext(ctx, "fanout: readers at the door", "community", community, "err", err)
		return 0, 0
	}
	for _, c := range refused {
		j := jobOf(c.connection)
		j.closed = append(j.closed, closing{sub: c.sub, at: len(j.msgs)})
		j.msgs = append(j.msgs, wire.ClosedMessage(c.sub, c.refusal))
	}
	channels := map[string]bool{}
	for _, it := range items {
		if it.channel != "" {
			channels[it.channel] = true
		}
	}
	// Access of each (channel, reader) pair, in one query.
	var pairs []records.ReadPair
	seen := map[records.ReadPair]bool{}
	for _, c := range cands {
		for ch := range channels {
			p := records.ReadPair{Channel: ch, Reader: c.pubkey}
			if !seen[p] {
				seen[p] = true
				pairs = append(pairs, p)
			}
		}
	}
	readable, err := f.readable(ctx, community, pairs)
	if err != nil {
		f.Log.ErrorContext(ctx, "fanout: access", "community", community, "err", err)
		return 0, 0
	}
	meta, err := f.metadataReachable(ctx, community, items, cands)
	if err != nil {
		f.Log.ErrorContext(ctx, "fanout: metadata access", "community", community, "err", err)
		return 0, 0
	}
	plans := make([]planned, len(cands))
	var lostPairs []records.ReadPair
	for i := range cands {
		plans[i].msgs, plans[i].ids, plans[i].lost = plan(&cands[i], items, readable, meta)
		if plans[i].lost != "" {
			lostPairs = append(lostPairs, records.ReadPair{Channel: plans[i].lost, Reader: cands[i].pubkey})
		}
	}
	// Only a reader who was a member learns that access ended; to anyone
	// else a private channel looks like an id that does not exist (no
	// events, no CLOSED).
	knew, err := f.Store.ChannelMembersCheckEver(ctx, community, lostPairs)
	if err != nil {
		f.Log.ErrorContext(ctx, "fanout: membership history", "community", community, "err", err)
		knew = map[records.ReadPair]bool{}
	}
	f.claim(ctx, cands, plans)
	for i := range cands {
		c := &cands[i]
		msgs, lost := plans[i].msgs, plans[i].lost
		if lost != "" && !knew[records.ReadPair{Channel: lost, Reader: c.pubkey}] {
			lost = ""
		}
		if len(msgs) == 0 && lost == "" {
			continue
		}
		j := jobOf(c.connection)
		j.msgs = append(j.msgs, msgs...)
		if lost != "" {
			j.closed = append(j.closed, closing{sub: c.sub, at: len(j.msgs)})
			j.msgs = append(j.msgs, wire.ClosedMessage(c.sub, reject.Restrictedf("you can no longer read channel %s", lost)))
		}
	}
	return len(jobs), f.run(ctx, order, jobs)
}

// unexpired are the items no reader is refused by access.Unexpired at now.
func unexpired(items []*item, now int64) []*item {
	out := items[:0:0]
	for _, it := range items {
		if access.Unexpired(it.ev, now) {
			out = append(out, it)
		}
	}
	return out
}

// turnedAway is a candidate the door refuses now.
type turnedAway struct {
	connection, sub string
	refusal         *reject.Error
}

// admitted splits cands into those whose reader the door admits now and
// those it turns away (Fanout.Door; all admitted without one).
func (f *Fanout) admitted(ctx context.Context, community string, cands []candidate) ([]candidate, []turnedAway, error) {
	if f.Door == nil || len(cands) == 0 {
		return cands, nil, nil
	}
	var readers []string
	seen := map[string]bool{}
	for _, c := range cands {
		if !seen[c.pubkey] {
			seen[c.pubkey] = true
			readers = append(readers, c.pubkey)
		}
	}
	refused, err := f.Door.Readers(ctx, community, readers)
	if err != nil || len(refused) == 0 {
		return cands, nil, err
	}
	in := cands[:0:0]
	var out []turnedAway
	for _, c := range cands {
		if why, no := refused[c.pubkey]; no {
			out = append(out, turnedAway{connection: c.connection, sub: c.sub, refusal: why})
			continue
		}
		in = append(in, c)
	}
	return in, out, nil
}

// metadataReachable answers access.MetadataReaches for the channels of the
// channel-state events among items (NIP-29's hidden flag) and every
// candidate's reader, in one statement; none without such events.
func (f *Fanout) metadataReachable(ctx context.Context, community string, items []*item, cands []candidate) (map[records.ReadPair]bool, error) {
	var pairs []records.ReadPair
	seen := map[records.ReadPair]bool{}
	for _, it := range items {
		if it.channel == "" || !kinds.ChannelState(it.ev.Kind) {
			continue
		}
		for _, c := range cands {
			p := records.ReadPair{Channel: it.channel, Reader: c.pubkey}
			if !seen[p] {
				seen[p] = true
				pairs = append(pairs, p)
			}
		}
	}
	if len(pairs) == 0 {
		return nil, nil
	}
	return f.Store.ChannelsCheckMetadataReadable(ctx, community, pairs)
}

// planned is what plan decided for one candidate.
type planned struct {
	msgs [][]byte
	// ids are the stored events of msgs, one per message ("" for an
	// ephemeral event or a summary: never claimed), as planned (claim
	// reads them, then drops the messages another deliverer claimed).
	ids  []string
	lost string
}

// job is everything one connection gets from one Deliver call, sent in order.
type job struct {
	connection string
	msgs       [][]byte
	closed     []closing // subscriptions this delivery ends
}

// closing is a subscription to end and the index of its CLOSED in msgs.
type closing struct {
	sub string
	at  int
}

// run posts the jobs, Concurrency connections at a time, and returns the
// number of messages posted.
func (f *Fanout) run(ctx context.Context, order []string, jobs map[string]*job) int {
	sem := make(chan struct{}, f.concurrency())
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	for _, id := range order {
		j := jobs[id]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			k := f.send(ctx, j)
			mu.Lock()
			sent += k
			mu.Unlock()
		}()
	}
	wg.Wait()
	return sent
}

// send posts one job's messages in order; a gone connection (or one whose
// post timed out) is dropped and gets none of the rest.
func (f *Fanout) send(ctx context.Context, j *job) int {
	// End them before their CLOSED goes out. Deliveries of concurrent
	// commits may all find the same subscription lost: only the one whose
	// delete removed it sends CLOSED, so the client gets one.
	skip := map[int]bool{}
	for _, c := range j.closed {
		ended, err := f.Sessions.End(ctx, j.connection, c.sub)
		if err != nil {
			f.Log.ErrorContext(ctx, "fanout: end subscription", "connection", j.connection, "sub", c.sub, "err", err)
		}
		skip[c.at] = err == nil && !ended
	}
	sent := 0
	for i, m := range j.msgs {
		if skip[i] {
			continue
		}
		err := wire.Post(ctx, f.Sender, j.connection, m, f.PostTimeout)
		switch {
		case err == nil:
			sent++
		case errors.Is(err, wire.ErrGone):
			// Gone, or too slow to take a post (PostTimeout):
			// dropped, so that no later delivery waits on it either.
			if err := f.Sessions.Drop(ctx, f.Sender, j.connection, err); err != nil {
				f.Log.ErrorContext(ctx, "fanout: remove gone connection", "connection", j.connection, "err", err)
			} else {
				f.Log.InfoContext(ctx, "fanout: removed gone connection", "connection", j.connection)
			}
			return sent
		default:
			f.Log.WarnContext(ctx, "fanout: post failed", "connection", j.connection, "err", err)
		}
	}
	return sent
}

// plan decides what candidate c gets: EVENT messages for the items it
// matches and may read, and lost, a pinned channel it can no longer read.
// A 39005 thread summary goes only to filters that ask for kind 39005.
func plan(c *candidate, items []*item, readable, meta map[records.ReadPair]bool) (msgs [][]byte, ids []string, lost string) {
	canRead := func(it *item, f *liveFilter) bool {
		return f.mayRead(it.ev, it.channel, it.system, c.pubkey, readable, meta)
	}
	matchesAny := func(it *item) bool {
		for i := range c.filters {
			f := &c.filters[i]
			if it.summary && !slices.Contains(f.f.Kinds, it.ev.Kind) {
				continue
			}
			if f.matches(it.ev, it.channel) && canRead(it, f) {
				return true
			}
		}
		return false
	}
	for _, it := range items {
		if it.channel != "" && c.pins(it.channel) && !readable[records.ReadPair{Channel: it.channel, Reader: c.pubkey}] {
			lost = it.channel
		}
		if matchesAny(it) {
			if m := wire.EventMessage(c.sub, it.raw); len(m) <= relayinfo.MaxMessageLength {
				msgs = append(msgs, m)
				id := it.ev.ID
				if it.summary || kinds.Ephemeral(it.ev.Kind) {
					id = ""
				}
				ids = append(ids, id)
			}
		}
	}
	return msgs, ids, lost
}

// items resolves the committed events against d (channel, channel type
// and thread root; an ephemeral event is never stored: its own h tag names
// its channel) and adds a fresh 39005 summary for every thread root a
// reply or a deleted reply changed (the audience is read after this:
// the summaries are made whatever it is).
func (f *Fanout) items(ctx context.Context, community string, events []*nostr.Event, d *store.Deliveries) ([]*item, error) {
	var out []*item
	roots := map[string]*item{}
	var order []string
	touch := func(root string, it *item) {
		if roots[root] == nil {
			order = append(order, root)
		}
		roots[root] = it
	}
	for _, ev := range events {
		m, ok := d.Events[ev.ID]
		if !ok && kinds.Ephemeral(ev.Kind) {
			raw, err := json.Marshal(ev)
			if err != nil {
				return nil, fmt.Errorf("fanout: encode ephemeral event: %w", err)
			}
			m, ok = ephemeral(d, ev, string(raw)), true
		}
		if !ok {
			continue // not stored (or deleted since): nothing to deliver
		}
		it := &item{ev: ev, raw: m.Raw, channel: m.Channel, system: m.System}
		out = append(out, it)
		if m.Root != "" {
			touch(m.Root, it)
		}
		if kinds.Deletes(ev.Kind) {
			for _, id := range filter.TagValues(ev.Tags, "e") {
				if root, ok := d.Roots[id]; ok {
					touch(root, it)
				}
			}
		}
	}
	if f.Summaries == nil {
		return out, nil
	}
	for _, root := range order {
		it := roots[root]
		sum, err := f.Summaries.ThreadSummary(ctx, community, root)
		if err != nil {
			f.Log.WarnContext(ctx, "fanout: thread summary", "root", root, "err", err)
			continue
		}
		if sum == nil {
			continue
		}
		raw, err := json.Marshal(sum)
		if err != nil {
			return nil, fmt.Errorf("fanout: encode 39005: %w", err)
		}
		out = append(out, &item{ev: sum, raw: string(raw), channel: it.channel, system: it.system, summary: true})
	}
	return out, nil
}

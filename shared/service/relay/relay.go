// Package relay is the use-case layer under both transports: what a
// client may ask of the relay, whichever door it came through. The HTTP
// bridge (POST /events, /query, /count) and the WebSocket relay (EVENT,
// REQ, CLOSE, COUNT) are codecs over it: they authenticate the caller
// (NIP-98, NIP-42), decode, call one method here and encode its answer or
// error through their one error table.
//
// A publish and a one-shot read run the paths pipeline.go lists, step by
// step in order; the door among them (shared/service/guard) decides once
// for every transport. PublishThenDeliver answers before live delivery
// runs (WebSocket's OK). Errors are domain errors: a refusal is a
// *reject.Error carrying its NIP-01 prefix, anything else an internal
// failure the transport's table turns into its opaque answer.
//
// The other use cases are packages of their own beside this one, each
// passing the same door first: media (shared/service/media), NIP-86
// management (shared/service/manage) and invites (shared/service/invites).
// A route reaches any of them through the one HTTP route table
// (shared/transport/routes).
package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/invites"
	"github.com/buzzrelay/relay/shared/service/negentropy"
	"github.com/buzzrelay/relay/shared/service/query"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/service/sessions"
)

// Caller is who asks, as the transport authenticated them.
type Caller struct {
	Community string
	// Pubkey is the authenticated key: the NIP-98 token's signer over HTTP,
	// the NIP-42 AUTH key over WebSocket ("" before AUTH).
	Pubkey string
	// Connection is the WebSocket connection ("" over HTTP): its message
	// limit counts the call, and a REQ's subscription belongs to it.
	Connection string
	// Size is the bytes of the message or body that carried the call (the
	// event-bytes limit counts it).
	Size int
	// Host is the hostname the community was reached at (normalized as
	// communities are registered): a thread window's 39007 binds it.
	Host string
	// Origin is scheme://host[:port] as the client addressed the relay
	// (the port kept): a request to vanish (NIP-62) must name it.
	Origin string
	// Address is the client's source address ("" unknown): an invite
	// claim's budget counts it (guard.Join).
	Address string
	// Session is the WebSocket connection's state (nil over HTTP).
	Session *session.Connection
	// counted is the call's message counted ahead of the door
	// (guard.Guard.CountMessage); nil: the door counts it.
	counted *ratelimit.Counted
}

// Request is one read.
type Request struct {
	// Filters are a REQ's or COUNT's filters, decoded by the WebSocket
	// codec.
	Filters []nostr.Filter
	// Body, when there are no Filters, is a POST /query or /count body: a
	// JSON array of filters the query engine parses and validates (an
	// empty one is refused there).
	Body []byte
	// ThreadWindows, when set instead of Filters, are a REQ's filters as
	// the client sent them, which ask for NIP-CW thread windows (the
	// WebSocket codec decides with query.IsThreadWindow): served one-shot
	// by the query engine's thread-window plans.
	ThreadWindows []json.RawMessage
	// Sub is a REQ's subscription id (Subscribe, Close).
	Sub string
}

// Published is the verdict on one published event, in NIP-01 OK terms.
type Published struct {
	Accepted bool
	// Message is "" on plain success, else NIP-01 prefixed: a duplicate
	// (Accepted) or a rule's refusal.
	Message string
}

// Reader is the read engine (shared/service/query).
type Reader interface {
	Query(ctx context.Context, community, host, reader string, body []byte) ([]json.RawMessage, error)
	ThreadWindows(ctx context.Context, community, host, reader string, filters []json.RawMessage) ([]json.RawMessage, error)
	Count(ctx context.Context, community, reader string, body []byte) (int64, error)
	Req(ctx context.Context, community, reader string, filters []nostr.Filter) ([]json.RawMessage, error)
	// ReqSeen is Req with the snapshot its read saw, and CommittedAfter
	// the stored events committed after such a read (an early answer's
	// catch-up, early.go).
	ReqSeen(ctx context.Context, community, reader string, filters []nostr.Filter) ([]json.RawMessage, store.Seen, error)
	CommittedAfter(ctx context.Context, community string, seen store.Seen) ([]string, error)
	ReadStateSnapshot(ctx context.Context, community, reader string, body []byte) (*query.ReadStateSnapshot, error)
	Sidebar(ctx context.Context, community, reader string, q query.SidebarQuery) (*query.SidebarPage, error)
	Contexts(ctx context.Context, community, reader string, cs []query.ContextQuery) (*query.ContextPage, error)
	ApplyIntents(ctx context.Context, community, reader string, intents []json.RawMessage, all bool) (*query.WriteResult, error)
	CountFilters(ctx context.Context, community, reader string, filters []nostr.Filter) (int64, error)
}

// Eraser deletes the media objects of what a request to vanish removed
// (shared/service/media).
type Eraser interface {
	EraseVanished(ctx context.Context, community string, v store.Vanished)
}

// Deliverer delivers committed events to live subscribers
// (shared/service/fanout).
type Deliverer interface {
	// Cutoff is taken as a commit returned, before its verdict is sent.
	Cutoff(ctx context.Context) (int64, error)
	// DeliverFrom delivers the committed events to the subscriptions
	// stored up to cutoff.
	DeliverFrom(ctx context.Context, community string, events []*nostr.Event, at *store.Delivery, cutoff int64)
	// CatchUp delivers stored events to one subscription, claiming each.
	CatchUp(ctx context.Context, community string, sub session.Subscription, raws []string) error
}

// Relay runs the use cases. Parts a function does not build are nil, and
// a method that needs one it lacks is not offered by that function's
// routes. Safe for concurrent use.
type Relay struct {
	Ingest   *ingest.Service    // writes; nil: none
	Reader   Reader             // reads; nil: none
	Fanout   Deliverer          // live delivery after commit; nil: none
	Sessions *sessions.Registry // WebSocket subscriptions; nil: none
	// Guard is the door every call passes first (the community served,
	// the rate limits, authentication, the NIP-43 gate); nil: only
	// authentication is required.
	Guard *guard.Guard
	// Invites mints the 28935 a REQ {kinds:[28935]} asks for; nil: such a
	// REQ is read as any other (nothing stored matches).
	Invites *invites.Service
	// Reconciler serves NIP-77 (Negentropy); nil: refused.
	Reconciler *negentropy.Service
	// Media deletes the objects of the blobs a request to vanish (NIP-62)
	// removed, after its commit; nil: the function has no bucket, and the
	// objects stay unreachable (their rows are gone).
	Media Eraser
	Log   *slog.Logger
}

// authored is the authorship rule: an event is signed by the key that
// authenticated its request (authed), unless its kind may carry another
// author (kinds.AnyAuthor, NIP-59 gift wraps). It is asked before any limit
// or database work.
func authored(ev *nostr.Event, authed string) error {
	if ev.PubKey != authed && !kinds.AnyAuthor(ev.Kind) {
		return reject.Restrictedf("event pubkey %.12s… is not the authenticated key", ev.PubKey)
	}
	return nil
}

// Publish submits ev for c: the authorship rule, the limits, ingest (every
// rule in one transaction) and, once committed, live delivery to every
// subscription that existed at commit (or, for an audience above the
// inline threshold, its hand-off to the fan-out function) before the
// verdict returns. A rule's refusal is a Published with Accepted false; an
// error is a refusal before ingest (restricted:, rate-limited:,
// auth-required:) or no verdict at all. POST /events answers with it.
func (r *Relay) Publish(ctx context.Context, c Caller, ev *nostr.Event) (Published, error) {
	out, deliver, err := r.PublishThenDeliver(ctx, c, ev)
	if err != nil {
		return Published{}, err
	}
	deliver(ctx)
	return out, nil
}

// PublishThenDeliver is Publish for a transport whose answer is a post of
// its own (WebSocket's OK): it returns the verdict as soon as the commit
// decided it, with live delivery still to run (deliver, which the
// transport calls once it has answered; the invocation keeps running
// until it returns). So no recipient, however slow, delays the
// publisher's OK, and the use case never calls back into its transport.
// Delivery still goes only to the subscriptions stored at the commit
// (read in its round trip, or up to its cutoff when handed off): one
// opened after the OK gets the event as stored, not twice. On an error
// there is nothing to deliver (deliver is nil).
func (r *Relay) PublishThenDeliver(ctx context.Context, c Caller, ev *nostr.Event) (out Published, deliver func(context.Context), err error) {
	w := &write{c: c, ev: ev}
	if err := r.publish(ctx, w); err != nil {
		return Published{}, nil, err
	}
	return Published{Accepted: w.out.Accepted, Message: w.out.Message}, func(ctx context.Context) { r.deliver(ctx, w) }, nil
}

// Read answers a one-shot read (req.Filters, else POST /query's req.Body),
// newest first, under the same limits and access rule as a REQ.
func (r *Relay) Read(ctx context.Context, c Caller, req Request) ([]json.RawMessage, error) {
	var evs []json.RawMessage
	err := r.read(ctx, &read{c: c, action: guard.Read, engine: func(ctx context.Context) (err error) {
		if req.Filters != nil {
			evs, err = r.Reader.Req(ctx, c.Community, c.Pubkey, req.Filters)
		} else {
			evs, err = r.Reader.Query(ctx, c.Community, c.Host, c.Pubkey, req.Body)
		}
		if err != nil {
			return fmt.Errorf("relay: read: %w", err)
		}
		return nil
	}})
	return evs, err
}

// IsThreadWindow reports whether a REQ's raw filter asks for a NIP-CW
// thread window (Request.ThreadWindows).
func IsThreadWindow(raw json.RawMessage) bool { return query.IsThreadWindow(raw) }

// WantsReadStateSnapshot reports whether a POST /query body asks for a
// NIP-RS read_state_snapshot (ReadStateSnapshot) rather than events.
func WantsReadStateSnapshot(body []byte) bool { return query.WantsReadStateSnapshot(body) }

// ReadStateSnapshot answers a NIP-RS read_state_snapshot body of POST
// /query for c: the read limits, then the whole snapshot from one database
// snapshot, or a refusal (never a partial list).
func (r *Relay) ReadStateSnapshot(ctx context.Context, c Caller, body []byte) (*query.ReadStateSnapshot, error) {
	var snap *query.ReadStateSnapshot
	err := r.read(ctx, &read{c: c, action: guard.Read, engine: func(ctx context.Context) (err error) {
		if snap, err = r.Reader.ReadStateSnapshot(ctx, c.Community, c.Pubkey, body); err != nil {
			return fmt.Errorf("relay: read-state snapshot: %w", err)
		}
		return nil
	}})
	return snap, err
}

// Sidebar answers Buzz's GET /buzz/v1/me/sidebar for c: the door
// (guard.ReadState), then the page of c's joined channels with their
// unread and attention counts, from one snapshot.
func (r *Relay) Sidebar(ctx context.Context, c Caller, q query.SidebarQuery) (*query.SidebarPage, error) {
	var page *query.SidebarPage
	err := r.read(ctx, &read{c: c, action: guard.ReadState, engine: func(ctx context.Context) (err error) {
		if page, err = r.Reader.Sidebar(ctx, c.Community, c.Pubkey, q); err != nil {
			return fmt.Errorf("relay: sidebar: %w", err)
		}
		return nil
	}})
	return page, err
}

// ReadStateContexts answers Buzz's GET /buzz/v1/me/read-state for c.
func (r *Relay) ReadStateContexts(ctx context.Context, c Caller, cs []query.ContextQuery) (*query.ContextPage, error) {
	var page *query.ContextPage
	err := r.read(ctx, &read{c: c, action: guard.ReadState, engine: func(ctx context.Context) (err error) {
		if page, err = r.Reader.Contexts(ctx, c.Community, c.Pubkey, cs); err != nil {
			return fmt.Errorf("relay: read-state contexts: %w", err)
		}
		return nil
	}})
	return page, err
}

// ReadStateWrite applies Buzz's POST /buzz/v1/me/read-state intents of c,
// each in its own transaction, through the same door.
func (r *Relay) ReadStateWrite(ctx context.Context, c Caller, intents []json.RawMessage, all bool) (*query.WriteResult, error) {
	var res *query.WriteResult
	err := r.read(ctx, &read{c: c, action: guard.ReadState, engine: func(ctx context.Context) (err error) {
		if res, err = r.Reader.ApplyIntents(ctx, c.Community, c.Pubkey, intents, all); err != nil {
			return fmt.Errorf("relay: read-state write: %w", err)
		}
		return nil
	}})
	return res, err
}

// Count answers a NIP-45 COUNT (req.Filters) or POST /count (req.Body).
func (r *Relay) Count(ctx context.Context, c Caller, req Request) (int64, error) {
	var n int64
	err := r.read(ctx, &read{c: c, action: guard.Count, engine: func(ctx context.Context) (err error) {
		if req.Filters != nil {
			n, err = r.Reader.CountFilters(ctx, c.Community, c.Pubkey, req.Filters)
		} else {
			n, err = r.Reader.Count(ctx, c.Community, c.Pubkey, req.Body)
		}
		if err != nil {
			return fmt.Errorf("relay: count: %w", err)
		}
		return nil
	}})
	return n, err
}

// Subscribe serves a REQ of c's connection: it stores subscription req.Sub
// first (indexed by the channels its filters pin), so that an event
// committed while the stored events are read is delivered live rather
// than lost (or, answered early, catches up once stored: early.go), then
// reads the stored events, newest first; the transport
// sends them and EOSE. A search is one-shot (NIP-50, as Buzz serves it):
// nothing live after EOSE, so it is not stored, and it ends a live
// subscription of the same id. Thread windows (req.ThreadWindows) are
// one-shot the same way, as Buzz serves them over WebSocket: their pages,
// aux closure and 39007 bounds, then EOSE. A read that fails drops the
// subscription.
func (r *Relay) Subscribe(ctx context.Context, c Caller, req Request) ([]json.RawMessage, error) {
	evs, after, err := r.SubscribeThen(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if err := after(ctx); err != nil {
		return nil, err
	}
	return evs, nil
}

// SubscribeThen is Subscribe with what may follow the answer returned
// undone (after, never nil): the transport sends the events and EOSE,
// then runs it, and sends CLOSED with the error it returns (the
// subscription then ended). It records the answer a later replay may be
// answered from (sessions.Registry.Answered), which a replay that comes
// first simply does not find; and for a REQ answered before its
// subscription was stored (subscribeEarly) it waits for the store, then
// delivers what committed after the read (catchUp).
func (r *Relay) SubscribeThen(ctx context.Context, c Caller, req Request) (evs []json.RawMessage, after func(context.Context) error, err error) {
	q := &subscription{c: c, req: req, after: func(context.Context) error { return nil }}
	err = r.subscribe(ctx, q)
	return q.evs, q.after, err
}

// oneShot serves a REQ with nothing live after EOSE (a search, thread
// windows, filters that end before now: EndsAtEOSE): a live subscription
// of the same id ends first.
func (r *Relay) oneShot(ctx context.Context, c Caller, req Request) ([]json.RawMessage, error) {
	if err := r.admit(ctx, c, r.door(c, guard.Read)); err != nil {
		return nil, err
	}
	if err := r.Sessions.CloseSub(ctx, c.Connection, req.Sub); err != nil {
		return nil, fmt.Errorf("relay: subscribe %s: %w", req.Sub, err)
	}
	var evs []json.RawMessage
	var err error
	if req.ThreadWindows != nil {
		evs, err = r.Reader.ThreadWindows(ctx, c.Community, c.Host, c.Pubkey, req.ThreadWindows)
	} else {
		evs, err = r.Reader.Req(ctx, c.Community, c.Pubkey, req.Filters)
	}
	if err != nil {
		return nil, fmt.Errorf("relay: one-shot req: %w", err)
	}
	return evs, nil
}

// subscribeLive serves a live REQ (its session store: DynamoDB). The filters are checked
// and the message counted against the connection's limit in the session
// store alongside the rest (the door decides on the count: Counted), then
// the REQ is answered one of two ways:
//   - a REQ for the newest stored events (some filter without since nor
//     limit 0: !sessions.MayBeAbove) is subscribeNewest's;
//   - otherwise the subscription is stored first, then the session store
//     decides (sessions.Registry.StoreAnswer, answerLive).
func (r *Relay) subscribeLive(ctx context.Context, c Caller, req Request) ([]json.RawMessage, func(context.Context) error, error) {
	if err := query.CheckFilters(req.Filters, c.Pubkey); err != nil {
		// Refused: a live subscription of the id ends (the client reads
		// CLOSED for it).
		return nil, nil, r.dropFailed(ctx, c, req.Sub, err)
	}
	row, err := r.Sessions.Row(c.Community, c.Connection, req.Sub, c.Pubkey, req.Filters)
	if err != nil {
		return nil, nil, fmt.Errorf("relay: subscribe %s: %w", req.Sub, err)
	}
	if c.Session != nil {
		row.Expires = c.Session.ExpiresAt
	}
	// An early answer of the same id waiting here is not stored after
	// this REQ's store (early.go).
	r.Sessions.Supersede(c.Connection, req.Sub)
	c.counted = r.Guard.CountMessage(ctx, r.door(c, guard.Message))
	defer c.counted.Wait()
	if !sessions.MayBeAbove(req.Filters) {
		return r.subscribeNewest(ctx, c, req, row)
	}
	// Stored first, then the mark read (strongly consistent): a commit
	// raises the mark before it commits and reads its audience after, so
	// a REQ answered from the store misses nothing.
	if err := r.Sessions.Put(ctx, row, sessions.DefaultLimits); err != nil {
		return nil, nil, fmt.Errorf("relay: subscribe %s: %w", req.Sub, err)
	}
	answer, read, err := r.Sessions.StoreAnswer(ctx, c.Community, c.Pubkey, req.Sub, req.Filters)
	if err != nil {
		r.Log.WarnContext(ctx, "relay: REQ from the session store", "connection", c.Connection, "err", err)
	}
	return r.answerLive(ctx, c, req, answer, read)
}

// subscribeNewest serves a live REQ for the newest stored events, which no
// mark can answer: its subscription is stored while the community's mark
// and the REQ's resume record are read (sessions.Registry.Peek). With a
// record, the session store decides once the subscription is stored
// (answerLive). Without one, the database answers once the door decided
// alongside the store: at once when the REQ may be answered early
// (early.go: the store and the catch-up follow the answer), else after
// the store, so the subscription is stored before the read's snapshot (a
// commit after that snapshot reads its audience after it, and delivers
// live). A refusal by the limits comes before the door's.
func (r *Relay) subscribeNewest(ctx context.Context, c Caller, req Request, row session.NewSubscription) ([]json.RawMessage, func(context.Context) error, error) {
	res, early := r.mayAnswerEarly(c, req)
	start := r.Sessions.Now()
	put := make(chan error, 1)
	store := func() { go func() { put <- r.Sessions.PutHeld(ctx, row, sessions.DefaultLimits, res) }() }
	if early {
		// Stored after the answer, unless closed by then (early.go).
		row.ClaimsUntil = start.Add(claimWindow).Unix()
	} else {
		store()
	}
	read, rec, err := r.Sessions.Peek(ctx, c.Community, c.Pubkey, req.Sub, req.Filters)
	if err != nil {
		r.Log.WarnContext(ctx, "relay: REQ's mark and resume record", "connection", c.Connection, "err", err)
	}
	if rec != nil {
		if early {
			store()
		}
		if err := <-put; err != nil {
			return nil, nil, fmt.Errorf("relay: subscribe %s: %w", req.Sub, err)
		}
		answer, read, err := r.Sessions.StoreAnswer(ctx, c.Community, c.Pubkey, req.Sub, req.Filters)
		if err != nil {
			r.Log.WarnContext(ctx, "relay: REQ from the session store", "connection", c.Connection, "err", err)
		}
		return r.answerLive(ctx, c, req, answer, read)
	}
	derr := r.admit(ctx, c, r.door(c, guard.Read))
	switch {
	case early && derr == nil:
		return r.subscribeEarly(ctx, c, req, row, read, res, start)
	case early:
		// Refused before anything was stored.
		r.Sessions.Release(res)
		return nil, nil, r.dropRefused(ctx, c, req.Sub, derr)
	}
	if err := <-put; err != nil {
		return nil, nil, fmt.Errorf("relay: subscribe %s: %w", req.Sub, err)
	}
	if derr != nil {
		return nil, nil, r.dropRefused(ctx, c, req.Sub, derr)
	}
	return r.readLive(ctx, c, req, read)
}

// answerLive answers a live REQ whose subscription is stored, as the
// session store decided (answer, with what it read): when no stored event
// can match (every filter has limit 0 or a since above the mark), or a
// resume record covers the REQ (a replay of one the database answered,
// with nothing written in the community since), the answer is EOSE alone,
// with no database statement: the door's checks that need it (the NIP-43
// gate) are then fan-out's to apply at delivery (fanout.Door); the
// message still counts against the connection's limit, in the session
// store. Otherwise the door decides, then the database answers (readLive).
// A refusal ends the stored subscription.
func (r *Relay) answerLive(ctx context.Context, c Caller, req Request, answer sessions.Answer, read sessions.Reading) ([]json.RawMessage, func(context.Context) error, error) {
	if answer != sessions.FromDatabase {
		if err := r.Admit(ctx, c); err != nil {
			return nil, nil, r.dropRefused(ctx, c, req.Sub, err)
		}
		if answer == sessions.FromMark {
			// Buzz desktop's live REQs (since now) are answered here; their
			// replay (since at or above) is then covered as well.
			return []json.RawMessage{}, r.answered(c, req, read, 0), nil
		}
		return []json.RawMessage{}, nil, nil
	}
	if err := r.admit(ctx, c, r.door(c, guard.Read)); err != nil {
		return nil, nil, r.dropRefused(ctx, c, req.Sub, err)
	}
	return r.readLive(ctx, c, req, read)
}

// readLive is the database's answer to a live REQ the door admitted and
// whose subscription is stored, with what follows it once sent: the
// record of the answer for a replay (answered).
func (r *Relay) readLive(ctx context.Context, c Caller, req Request, read sessions.Reading) ([]json.RawMessage, func(context.Context) error, error) {
	evs, err := r.Reader.Req(ctx, c.Community, c.Pubkey, req.Filters)
	if err != nil {
		return nil, nil, r.dropFailed(ctx, c, req.Sub, err)
	}
	return evs, r.answered(c, req, read, newestOf(evs)), nil
}

// answered is what records a live REQ's answer, the newest event it sent
// at newest (0: none), for a replay (sessions.Registry.Answered), to run
// once the answer is sent: a replay that comes before it meets the
// database.
func (r *Relay) answered(c Caller, req Request, read sessions.Reading, newest int64) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := r.Sessions.Answered(ctx, c.Community, c.Pubkey, req.Sub, req.Filters, read, newest); err != nil {
			r.Log.WarnContext(ctx, "relay: record the REQ's answer for a replay", "connection", c.Connection, "err", err)
		}
		return nil
	}
}

// dropRefused ends subscription sub of c's connection, stored before the
// door refused its REQ with err, and returns err.
func (r *Relay) dropRefused(ctx context.Context, c Caller, sub string, err error) error {
	if uerr := r.Sessions.Unsubscribe(ctx, c.Connection, sub); uerr != nil {
		r.Log.ErrorContext(ctx, "relay: drop refused subscription", "connection", c.Connection, "sub", sub, "err", uerr)
	}
	return err
}

// newestOf is the highest created_at among evs (0: none).
func newestOf(evs []json.RawMessage) int64 {
	var newest int64
	for _, raw := range evs {
		var ev struct {
			CreatedAt int64 `json:"created_at"`
		}
		if json.Unmarshal(raw, &ev) == nil && ev.CreatedAt > newest {
			newest = ev.CreatedAt
		}
	}
	return newest
}

// dropFailed ends subscription sub of c's connection after its REQ failed
// with err (a replaced one must not stay live under a CLOSED id) and
// returns err wrapped.
func (r *Relay) dropFailed(ctx context.Context, c Caller, sub string, err error) error {
	if uerr := r.Sessions.Unsubscribe(ctx, c.Connection, sub); uerr != nil {
		r.Log.ErrorContext(ctx, "relay: drop failed subscription", "connection", c.Connection, "sub", sub, "err", uerr)
	}
	return fmt.Errorf("relay: req: %w", err)
}

// Close ends subscription req.Sub of c's connection (CLOSE; nothing if
// there is none).
func (r *Relay) Close(ctx context.Context, c Caller, req Request) error {
	if err := r.Admit(ctx, c); err != nil {
		return err
	}
	if err := r.Sessions.CloseSub(ctx, c.Connection, req.Sub); err != nil {
		return fmt.Errorf("relay: close %s: %w", req.Sub, err)
	}
	return nil
}

// Admit counts a message that asks for none of the above (a NIP-42 AUTH,
// a CLOSE, a REQ the session store answers) against c's connection's
// limit, in the session store alone (guard.Guard.Message: no database
// statement).
func (r *Relay) Admit(ctx context.Context, c Caller) error {
	return r.Guard.Message(ctx, r.door(c, guard.Message))
}

// door is c's call of action at the door.
func (r *Relay) door(c Caller, action guard.Action) guard.Door {
	return guard.Door{Community: c.Community, Action: action, Caller: guard.Caller{Pubkey: c.Pubkey, Connection: c.Connection,
		Size: c.Size, Counted: c.counted, Address: c.Address}}
}

// admit passes d, c's call, through the door.
func (r *Relay) admit(ctx context.Context, c Caller, d guard.Door) error {
	_, err := r.Guard.Admit(ctx, d)
	if err == nil {
		return nil
	}
	if _, ok := reject.As(err); !ok {
		return fmt.Errorf("relay: %w", err)
	}
	return err
}

// erase deletes the objects of the blobs and staged uploads a committed
// request to vanish removed, and logs it.
func (r *Relay) erase(ctx context.Context, c Caller, ev *nostr.Event, v store.Vanished) {
	if r.Log != nil {
		r.Log.InfoContext(ctx, "relay: request to vanish (NIP-62)", "community", c.Community, "pubkey", ev.PubKey,
			"events", v.Events, "blobs", len(v.Blobs), "uploads", len(v.Uploads), "objects", r.Media != nil)
	}
	if r.Media != nil && (len(v.Blobs) > 0 || len(v.Uploads) > 0) {
		r.Media.EraseVanished(ctx, c.Community, v)
	}
}

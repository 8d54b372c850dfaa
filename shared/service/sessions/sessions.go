// Package sessions is the session registry: the store-facing half of the
// WebSocket sessions of API Gateway's model, where every client message is
// one invocation and invocations of one connection may land on different
// instances. It owns, over the one session store (session.Store, in
// DynamoDB: shared/aws/ddbsessions), connections with their NIP-42
// challenge and authenticated key, REQ subscriptions indexed by the
// channels their filters pin and their limits, the early answers' room
// (room.go), delivery claims, each community's last-commit mark and
// last-write stamp, resume records, the connections' message counters and
// the open connections. Its nouns and the store's interface are
// shared/domain/session's (used by that name: no aliases here). What is
// posted to a connection (frames, posting and pacing, the NIP-42
// challenge, the greeting and liveness) is shared/service/wire's. Live
// delivery (shared/service/fanout) reads the subscriptions stored here; it
// does not keep them.
package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/session"
)

// ExpiresAt is when API Gateway closes a connection opened at connectedAt
// (unix seconds): its row's expires_at, the end of its host's trust.
func ExpiresAt(connectedAt int64) int64 { return connectedAt + int64(session.Lifetime/time.Second) }

// DefaultLimits are the subscription limits every REQ meets: relayinfo's
// per connection and per key (in a community, across its connections).
var DefaultLimits = session.Limits{PerConnection: relayinfo.MaxSubscriptions, PerKey: relayinfo.MaxSubscriptionsPerKey}

// Registry is the one session interface the transports and use cases
// use, over a Store (DynamoDB). Safe for concurrent use.
type Registry struct {
	st  session.Store
	now func() time.Time

	// Latest, when set, is the highest created_at stored in a community
	// (the database): a community's first mark starts there, so that it
	// also covers what was stored before marks were kept.
	Latest func(ctx context.Context, community string) (int64, error)

	mu      sync.Mutex
	marks   session.Highest          // community → a mark known to exist
	stamps  session.Highest          // community → a last-write stamp known to exist
	raising map[string]chan struct{} // community → its raise in flight (a token)
	room    rooms                    // subscription counts, for early answers (room.go)
}

// NewRegistry builds the registry over st.
func NewRegistry(st session.Store) *Registry {
	return &Registry{st: st, now: time.Now, raising: map[string]chan struct{}{}}
}

// Claim reports whether this call is the first to claim p.Event for
// subscription p.Sub of p.Connection (Store.Claim), kept until at least
// p.Until.
func (r *Registry) Claim(ctx context.Context, p session.ClaimParams) (bool, error) {
	won, err := r.st.Claim(ctx, p)
	if err != nil {
		return false, fmt.Errorf("sessions: %w", err)
	}
	return won, nil
}

// SetClock makes r read the time from now (tests).
func (r *Registry) SetClock(now func() time.Time) { r.now = now }

// Now is the registry's clock (a subscription's creation, a connection's
// liveness).
func (r *Registry) Now() time.Time { return r.now() }

// Open records c (replacing a connection with the same id) and returns
// it as recorded: its connection and expiry times filled in when unset.
func (r *Registry) Open(ctx context.Context, c session.Connection) (session.Connection, error) {
	if c.ConnectedAt == 0 {
		c.ConnectedAt = r.now().Unix()
	}
	if c.ExpiresAt == 0 {
		c.ExpiresAt = ExpiresAt(c.ConnectedAt)
	}
	if err := r.st.OpenConnection(ctx, c); err != nil {
		return c, fmt.Errorf("sessions: open %s: %w", c.ID, err)
	}
	return c, nil
}

// Get returns the live connection id, or ErrUnknownConnection.
func (r *Registry) Get(ctx context.Context, id string) (*session.Connection, error) {
	return r.st.Connection(ctx, id, r.now().Unix())
}

// MarkChallengeSent records that the AUTH challenge went out; first is
// false when another invocation already sent it.
func (r *Registry) MarkChallengeSent(ctx context.Context, id string) (first bool, err error) {
	return r.st.MarkChallengeSent(ctx, id)
}

// Authenticate records pubkey as the connection's authenticated key.
func (r *Registry) Authenticate(ctx context.Context, id, pubkey string) error {
	return r.st.Authenticate(ctx, id, pubkey)
}

// Close forgets the connection, its subscriptions and its open entry.
func (r *Registry) Close(ctx context.Context, id string) error {
	r.forgetRoom(id)
	return r.st.CloseConnection(ctx, id)
}

// Subscribe stores (or replaces) subscription sub of connection for reader
// with filters, indexed by the channels they pin, under lim: a new id past
// the connection's limit is refused (restricted:, Full), one past the
// key's (rate-limited:, KeyFull).
func (r *Registry) Subscribe(ctx context.Context, community, connection, sub, reader string, filters []nostr.Filter, lim session.Limits) error {
	row, err := r.Row(community, connection, sub, reader, filters)
	if err != nil {
		return err
	}
	return r.Put(ctx, row, lim)
}

// Put stores row under lim (Subscribe), its refusal a reject error, at
// once (PutHeld without a reservation): no invocation waits for room that
// another invocation (a CLOSE, perhaps queued behind it on the same busy
// instance) would make.
func (r *Registry) Put(ctx context.Context, row session.NewSubscription, lim session.Limits) error {
	return r.PutHeld(ctx, row, lim, nil)
}

// Row is the stored form of subscription sub of connection for reader
// with filters (what Subscribe stores).
func (r *Registry) Row(community, connection, sub, reader string, filters []nostr.Filter) (session.NewSubscription, error) {
	raw, err := encodeFilters(filters)
	if err != nil {
		return session.NewSubscription{}, err
	}
	if len(raw) > MaxFilterBytes {
		return session.NewSubscription{}, reject.Invalidf("the filters of %q take %d bytes once parsed, the limit is %d", sub, len(raw), MaxFilterBytes)
	}
	return session.NewSubscription{
		Subscription: session.Subscription{Connection: connection, Sub: sub, Pubkey: reader, Filters: string(raw)},
		Community:    community, Pins: indexPins(Pins(filters), len(raw)), CreatedAt: r.now().Unix(),
	}, nil
}

// MaxFilterBytes bounds a subscription's filters as stored: twice a
// message, room for what parsing makes longer (an invalid UTF-8 byte read
// as U+FFFD, U+2028 written escaped), and within a DynamoDB item (400 KB)
// with the rest of a subscription's item or entry.
const MaxFilterBytes = 2 * relayinfo.MaxMessageLength

// encodeFilters is the stored form of filters: JSON without HTML escaping
// (json.Marshal would write each <, > and & as six bytes).
func encodeFilters(filters []nostr.Filter) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(filters); err != nil {
		return nil, fmt.Errorf("sessions: encode filters: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// PinBytes bounds a subscription's index: each pin's entry carries the
// filters (delivery reads them from the entry, in DynamoDB), so pins
// times the filters' size above it, as when one REQ names thousands of
// channels, would make one message thousands of writes. Such a
// subscription is indexed in the any-channel bucket alone, where every
// event of its community finds it and its filters decide, as for a
// filter that names no channel: one entry, whatever it names.
const PinBytes = 64 << 10

// indexPins are the pins a subscription with filters of size bytes is
// indexed under (PinBytes).
func indexPins(pins []string, size int) []string {
	if len(pins) > 1 && len(pins)*size > PinBytes {
		return []string{""}
	}
	return pins
}

// reconcilePrefix leads the session-store id of a NIP-77 reconciliation
// (ReconcileKey): longer than any subscription id a REQ may use
// (relayinfo.MaxSubIDLength), so a REQ and a reconciliation of the same
// id are two entries, and no REQ can name or end a reconciliation.
var reconcilePrefix = "NEG-OPEN" + strings.Repeat(".", relayinfo.MaxSubIDLength+1-len("NEG-OPEN"))

// ReconcileKey is the session-store id of the client's reconciliation sub
// (shared/service/negentropy).
func ReconcileKey(sub string) string { return reconcilePrefix + sub }

// ClientSub is the id the client gave the subscription stored as key:
// a reconciliation's without ReconcileKey's prefix. Every refusal quotes
// it, never the stored form.
func ClientSub(key string) string { return strings.TrimPrefix(key, reconcilePrefix) }

// Full is the refusal of a new subscription sub past max on its
// connection.
func Full(max int, sub string) error {
	return reject.Restrictedf("a connection may hold %d subscriptions; CLOSE one before opening %q", max, sub)
}

// KeyFull is the refusal of a new subscription sub past max of its key.
func KeyFull(max int, sub string) error {
	return reject.New(reject.RateLimited, "a key may hold %d subscriptions in this community across its connections; CLOSE one before opening %q", max, sub)
}

// Unsubscribe removes subscription sub of connection (no error if absent).
func (r *Registry) Unsubscribe(ctx context.Context, connection, sub string) error {
	_, err := r.End(ctx, connection, sub)
	return err
}

// CloseSub ends subscription sub of connection as its client asked (a
// CLOSE, or a REQ that replaces the id with a one-shot read), leaving the
// tombstone a REQ answered before its store landed withdraws by
// (WithdrawIfClosed).
func (r *Registry) CloseSub(ctx context.Context, connection, sub string) error {
	r.Supersede(connection, sub)
	ended, err := r.st.CloseSubscription(ctx, connection, sub, r.now().UnixNano())
	if ended {
		r.closed(connection, sub)
	}
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	return nil
}

// ClosedSince reports whether the client closed subscription sub of
// connection since since (a CLOSE's tombstone, Store.ClosedAt).
func (r *Registry) ClosedSince(ctx context.Context, connection, sub string, since time.Time) (bool, error) {
	at, err := r.st.ClosedAt(ctx, connection, sub)
	if err != nil {
		return false, fmt.Errorf("sessions: %w", err)
	}
	return at >= since.UnixNano(), nil
}

// WithdrawIfClosed removes row, stored for a REQ answered before its
// store landed, when its client closed the id since the REQ began
// (since): true then, and the subscription is no more.
func (r *Registry) WithdrawIfClosed(ctx context.Context, row session.NewSubscription, since time.Time) (bool, error) {
	closed, err := r.ClosedSince(ctx, row.Connection, row.Sub, since)
	if err != nil || !closed {
		return false, err
	}
	if err := r.st.Withdraw(ctx, row); err != nil {
		return true, fmt.Errorf("sessions: %w", err)
	}
	r.closed(row.Connection, row.Sub)
	return true, nil
}

// End removes subscription sub of connection and reports whether it was
// there (of concurrent enders, exactly one sees true).
func (r *Registry) End(ctx context.Context, connection, sub string) (bool, error) {
	ended, err := r.st.EndSubscription(ctx, connection, sub)
	if ended {
		r.closed(connection, sub)
	}
	return ended, err
}

// stamp raises community's last-write stamp to this second, before a
// write: nothing when this instance knows it is that high already (a
// write's stamp is then at most a second early, which ResumeSettle
// covers), else one conditional write.
func (r *Registry) stamp(ctx context.Context, community string) error {
	now := r.now().Unix()
	known := r.stamps.Get(community)
	if known >= now {
		return nil
	}
	w, err := r.st.Stamp(ctx, community, now)
	if err != nil {
		return fmt.Errorf("sessions: stamp %s: %w", community, err)
	}
	r.stamps.Saw(community, w)
	return nil
}

// RaiseMark makes community's last-commit mark at least v, before a
// commit that may store events created up to v: nothing when this
// instance knows a mark at least v exists (marks never go down), else one
// conditional write; a community's first mark also covers what the
// database stored before it (Latest).
//
// One raise per community runs at a time in an instance: the writes that
// need one meanwhile (every write in flight when the clock turns a
// second) wait for it and then, most often, need none.
func (r *Registry) RaiseMark(ctx context.Context, community string, v int64) error {
	if err := r.stamp(ctx, community); err != nil {
		return err
	}
	if r.marks.Get(community) >= v {
		return nil
	}
	token := r.raiseToken(community)
	select {
	case token <- struct{}{}:
		defer func() { <-token }()
	case <-ctx.Done():
		return fmt.Errorf("sessions: raise mark of %s: %w", community, ctx.Err())
	}
	if r.marks.Get(community) >= v {
		return nil
	}
	m, exists, err := r.st.RaiseMark(ctx, community, v, r.Latest == nil)
	if err != nil {
		return fmt.Errorf("sessions: raise mark of %s: %w", community, err)
	}
	if !exists {
		first, err := r.Latest(ctx, community)
		if err != nil {
			return fmt.Errorf("sessions: first mark of %s: %w", community, err)
		}
		if m, _, err = r.st.RaiseMark(ctx, community, max(v, first), true); err != nil {
			return fmt.Errorf("sessions: raise mark of %s: %w", community, err)
		}
	}
	r.marks.Saw(community, m)
	return nil
}

// raiseToken is community's one-slot token of RaiseMark.
func (r *Registry) raiseToken(community string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.raising[community]
	if t == nil {
		t = make(chan struct{}, 1)
		r.raising[community] = t
	}
	return t
}

// Answer is how a live REQ is answered (StoreAnswer).
type Answer int

const (
	// FromDatabase: the door, then the database's read.
	FromDatabase Answer = iota
	// FromMark: no stored event can match (every filter limit 0, or its
	// since above the community's last-commit mark): EOSE alone.
	FromMark
	// FromResume: a resume record covers the REQ (session.Resume.Covers):
	// EOSE alone, as when it was last answered.
	FromResume
)

// Reading is the community's state a REQ read after storing its
// subscription, and the clock just before that read: what a record of its
// answer keeps (Answered).
type Reading struct {
	Mark session.Mark
	At   int64
}

// StoreAnswer decides how the live REQ sub of pubkey with filters in
// community is answered, read strongly consistent after its subscription
// was stored. FromMark misses nothing: a commit raises the mark before it
// commits and reads the audience (which then holds the subscription)
// after. FromResume misses nothing: every write stamps the community
// before it commits, and a record only covers a REQ while the stamp is
// the one its answer read (session.Resume.Covers, the one rule). A record
// used is kept ResumeFor longer. An error reading the store is
// FromDatabase with the error.
func (r *Registry) StoreAnswer(ctx context.Context, community, pubkey, sub string, filters []nostr.Filter) (Answer, Reading, error) {
	if len(filters) == 0 {
		return FromDatabase, Reading{}, nil
	}
	if AllLimitZero(filters) {
		return FromMark, Reading{}, nil
	}
	if pubkey == "" && !MayBeAbove(filters) {
		// Neither the mark nor a resume record (kept for a key only) can
		// answer it: the store is not asked.
		return FromDatabase, Reading{}, nil
	}
	at := r.now().Unix()
	shape, _, _, shapeErr := session.ShapeOf(filters)
	resumable := pubkey != "" && shapeErr == nil
	var (
		rec    *session.Resume
		recErr error
		recNow int64
		done   chan struct{}
	)
	readResume := func() {
		recNow = r.now().Unix()
		rec, recErr = r.st.Resume(ctx, session.ResumeParams{Community: community, Pubkey: pubkey, Sub: sub, Shape: shape, Now: recNow})
	}
	if resumable && !MayBeAbove(filters) {
		// The mark cannot answer this REQ (no since): its resume record
		// is read alongside the mark, not after it.
		done = make(chan struct{})
		go func() {
			defer close(done)
			readResume()
		}()
	}
	m, err := r.st.Mark(ctx, community)
	if err != nil {
		if done != nil {
			<-done
		}
		return FromDatabase, Reading{}, err
	}
	read := Reading{Mark: m, At: at}
	if m.Exists {
		r.marks.Saw(community, m.Value)
		if Above(filters, m.Value) {
			return FromMark, read, nil
		}
	}
	if !resumable {
		return FromDatabase, read, nil
	}
	if done != nil {
		<-done
	} else {
		readResume()
	}
	now := recNow
	if recErr != nil || !rec.Covers(community, pubkey, sub, filters, m, now) {
		return FromDatabase, read, recErr
	}
	rec.ExpiresAt = now + int64(session.ResumeFor/time.Second)
	if err := r.st.SaveResume(ctx, *rec); err != nil {
		return FromDatabase, read, fmt.Errorf("sessions: keep resume of %s: %w", sub, err)
	}
	return FromResume, read, nil
}

// Peek reads, at once and before the live REQ sub of pubkey with filters
// in community is stored, what its answer needs when no mark can answer
// it (!MayBeAbove: some filter asks for the newest stored events): the
// community's mark, as of before the database's read (the Reading a
// record of the answer keeps, Answered), and the REQ's resume record (nil:
// none; with one, StoreAnswer decides once the subscription is stored).
// Neither read needs the subscription stored: the record is only used
// through StoreAnswer's own read after it, and a write that stamps the
// community after this mark is read is one the record refuses (the stamp
// differs). An error reading either is returned with what was read.
//
// Neither is read when this instance stamped the community within
// ResumeSettle (a write it ran): no record can cover the REQ then (a record
// is made only ResumeSettle after the last stamp before its answer, and
// covers only ResumeSettle after that answer, so the stamp has moved
// since), nor may its answer leave one (session.NewResume); the zero
// Reading says so to Answered.
func (r *Registry) Peek(ctx context.Context, community, pubkey, sub string, filters []nostr.Filter) (Reading, *session.Resume, error) {
	at := r.now().Unix()
	if r.stamps.Get(community) >= at-session.ResumeSettle {
		return Reading{}, nil, nil
	}
	var (
		rec    *session.Resume
		recErr error
		wg     sync.WaitGroup
	)
	if shape, _, _, err := session.ShapeOf(filters); pubkey != "" && err == nil {
		wg.Go(func() {
			rec, recErr = r.st.Resume(ctx, session.ResumeParams{Community: community, Pubkey: pubkey, Sub: sub, Shape: shape, Now: at})
		})
	}
	m, err := r.st.Mark(ctx, community)
	wg.Wait()
	if err != nil {
		return Reading{}, rec, errors.Join(err, recErr)
	}
	if m.Exists {
		r.marks.Saw(community, m.Value)
	}
	return Reading{Mark: m, At: at}, rec, recErr
}

// Answered records that the database answered the live REQ sub of pubkey
// with filters in community, given what the REQ read before the door and
// the read (read), newest the highest created_at of the events it sent (0:
// none): a later replay of it is answered from the record while nothing
// is written in the community (session.NewResume makes none when the
// community was written within ResumeSettle before) and it says it holds
// what was sent (session.Resume.Covers).
func (r *Registry) Answered(ctx context.Context, community, pubkey, sub string, filters []nostr.Filter, read Reading, newest int64) error {
	if pubkey == "" || read.At == 0 {
		return nil
	}
	rec, ok := session.NewResume(community, pubkey, sub, filters, read.Mark.Wrote, read.At, newest)
	if !ok {
		return nil
	}
	if err := r.st.SaveResume(ctx, rec); err != nil {
		return fmt.Errorf("sessions: record resume of %s: %w", sub, err)
	}
	return nil
}

// AllLimitZero reports whether every filter asks for no stored event
// (limit 0).
func AllLimitZero(filters []nostr.Filter) bool {
	for _, f := range filters {
		if !f.LimitZero {
			return false
		}
	}
	return len(filters) > 0
}

// MayBeAbove reports whether some mark could make Above true: every
// filter has limit 0 or a since. A REQ for the newest stored events (no
// since) never can, so it needs no read of the mark.
func MayBeAbove(filters []nostr.Filter) bool {
	for _, f := range filters {
		if !f.LimitZero && f.Since == nil {
			return false
		}
	}
	return len(filters) > 0
}

// Above reports whether every filter asks for no stored event up to mark:
// limit 0, or a since above it.
func Above(filters []nostr.Filter, mark int64) bool {
	if len(filters) == 0 {
		return false
	}
	for _, f := range filters {
		if !f.LimitZero && (f.Since == nil || int64(*f.Since) <= mark) {
			return false
		}
	}
	return true
}

// Opened records connection id among the open connections the liveness
// tick posts to (for Lifetime).
func (r *Registry) Opened(ctx context.Context, id string) error {
	return r.st.Opened(ctx, id, r.now().Unix()+int64(session.Lifetime/time.Second))
}

// OpenConnections lists the open connections.
func (r *Registry) OpenConnections(ctx context.Context) ([]string, error) {
	return r.st.OpenConnections(ctx, r.now().Unix())
}

// Gone forgets connection id, which a post found gone, among the open
// connections.
func (r *Registry) Gone(ctx context.Context, id string) error {
	return r.st.ForgetOpen(ctx, id)
}

// SubscriptionsByKey returns the live subscriptions of community among
// keys ([connection, sub] pairs); a closed one is absent.
func (r *Registry) SubscriptionsByKey(ctx context.Context, community string, keys [][2]string) ([]session.Subscription, error) {
	return r.st.SubscriptionsByKey(ctx, community, keys, r.now().Unix())
}

// AudienceRange returns the live subscriptions of p.Community pinned to
// one of p.Channels or the any-channel bucket, in (p.After, p.Through],
// stored up to p.Cutoff (Store.AudienceRange; p.Now is the registry's
// clock).
func (r *Registry) AudienceRange(ctx context.Context, p session.AudienceRangeParams) ([]session.Subscription, error) {
	p.Now = r.now().Unix()
	return r.st.AudienceRange(ctx, p)
}

// AudienceBounds splits the connections of the audience of channels into
// runs of per (Store.AudienceBounds).
func (r *Registry) AudienceBounds(ctx context.Context, community string, channels []string, per int) ([]string, error) {
	return r.st.AudienceBounds(ctx, community, channels, per)
}

// Cutoff is a commit's position among the subscriptions, taken after it
// (Store.Cutoff).
func (r *Registry) Cutoff(ctx context.Context) (int64, error) { return r.st.Cutoff(ctx) }

// Mark reads community's last-commit mark and last-write stamp
// (Store.Mark).
func (r *Registry) Mark(ctx context.Context, community string) (session.Mark, error) {
	return r.st.Mark(ctx, community)
}

// CountMessage counts one message of a connection in its window
// (Store.CountMessage).
func (r *Registry) CountMessage(ctx context.Context, p session.CountParams) (int64, error) {
	return r.st.CountMessage(ctx, p)
}

// Pins are the index keys of a subscription: the channels its filters
// pin, and "" when a filter pins none (the any-channel bucket). A filter
// with #h pins its channels; one of channel-state kinds only, its #d; one
// with an empty #h or #d matches nothing and pins nothing.
func Pins(filters []nostr.Filter) []string {
	set := map[string]bool{}
	for _, nf := range filters {
		f := filter.FromNostr(nf)
		if h, ok := f.Tags["h"]; ok {
			for _, c := range h {
				set[c] = true
			}
			continue
		}
		if d, ok := f.Tags["d"]; ok && access.StateOnly(f.Kinds) {
			for _, c := range d {
				set[c] = true
			}
			continue
		}
		set[""] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

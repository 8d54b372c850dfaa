// Package ingest is the write path shared by POST /events and WebSocket
// EVENT: it checks an event, applies the NIP-29 / NIP-CL / thread rules in one
// database transaction, and publishes the relay-signed state that changed.
// pipeline.go lists every policy in the order it runs, and the rule of each
// kind; channels.go holds the NIP-29 moderation rules, content.go the
// messages, replies, reactions, edits, deletions and replaceables.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
)

// Service applies events. It is safe for concurrent use.
type Service struct {
	store  *store.Store
	signer signer.Signer
	now    func() time.Time
	sigs   *sigverify.Verifier
	// delivery, when set, names what live delivery of the committed
	// events needs, for the commit to load it (Outcome.Delivery).
	delivery func([]*nostr.Event) store.DeliveryRequest
	// mark, when set, is asked before each write transaction
	// (WithMark).
	mark Mark
	// queue orders this process's writes to one channel (queue.go).
	queue *channelQueue
	// push, when set, accepts push subscriptions and leases (WithPush).
	push PushRules
	// claimer takes invites' uses (invites.go); nil: none.
	claimer Claimer
	// workflows, when set, runs Buzz's workflow kinds (WithWorkflows).
	workflows WorkflowRules
	// livekit: the relay serves NIP-29 LiveKit rooms, so a group that has
	// one says so in its 39000 (WithLiveKit).
	livekit bool
	// directory is told, after the commit, of a write that changed what
	// NIP-11 shows (a 9033's icon); nil: none kept (WithDirectory).
	directory community.Directory
}

// WithDirectory returns a copy of s that rewrites a community's directory
// documents through d after a committed write changed what they hold
// (shared/service/directory: NIP-11 reads them, not the database).
func (s *Service) WithDirectory(d community.Directory) *Service {
	c := *s
	c.directory = d
	return &c
}

// WithLiveKit returns a copy of s whose groups' 39000 carry the livekit
// tag when on and the group has a room (shared/domain/livekit).
func (s *Service) WithLiveKit(on bool) *Service {
	c := *s
	c.livekit = on
	return &c
}

// PushRules is shared/service/push's rule for kinds 30390 and 30350, run
// in the event's transaction: the state to store beside the event, or the
// refusal.
type PushRules interface {
	Accept(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64) (*store.PushSubscription, error)
}

// WithPush returns a copy of s whose push subscriptions (30390) and leases
// (30350) are accepted by p and their state stored with the event.
func (s *Service) WithPush(p PushRules) *Service {
	c := *s
	c.push = p
	return &c
}

// Mark raises community's last-commit mark to at least upTo before a
// write that may store events created up to upTo
// (shared/service/sessions.Registry.RaiseMark): a REQ answered from the
// mark then never misses a committed event. An error fails the write. A
// write whose relay-signed events run past upTo (each dated max(now,
// previous+1) under its channel's or address's lock) raises it again
// inside its transaction, for their latest created_at, before its commit.
type Mark func(ctx context.Context, community string, upTo int64) error

// WithMark returns a copy of s whose writes raise the mark with m.
func (s *Service) WithMark(m Mark) *Service {
	c := *s
	c.mark = m
	return &c
}

// New builds the write path over st, signing relay events with sg.
func New(st *store.Store, sg signer.Signer) *Service {
	return &Service{store: st, signer: sg, now: time.Now, sigs: sigverify.New(sigverify.Options{}), queue: newChannelQueue()}
}

// WithSignatures returns a copy of s that checks signatures through v (the
// instance's one Verifier, shared with AUTH and NIP-98, so a key's table is
// built once).
func (s *Service) WithSignatures(v *sigverify.Verifier) *Service {
	c := *s
	c.sigs = v
	return &c
}

// WithClock returns a copy of s that reads time from now (tests).
func (s *Service) WithClock(now func() time.Time) *Service {
	c := *s
	c.now = now
	return &c
}

// WithDelivery returns a copy of s whose commits also load what live
// delivery of their events needs, as request names it (fanout's Request):
// in the commit's round trip (store.Tx.DeliveriesGetAtCommit).
func (s *Service) WithDelivery(request func([]*nostr.Event) store.DeliveryRequest) *Service {
	c := *s
	c.delivery = request
	return &c
}

// Outcome is the answer to one submitted event, in NIP-01 OK terms.
type Outcome struct {
	Accepted bool
	// Message is "" on plain success, else NIP-01 prefixed: a duplicate
	// (Accepted) or the rejection; or what an accepted request to vanish
	// did.
	Message string
	// Committed lists the events this submission stored, the client's first,
	// then relay-signed ones, for live fan-out; an ephemeral event is listed
	// though never stored. Empty unless Accepted and new.
	Committed []*nostr.Event
	// Delivery is what delivery of Committed needs, loaded by the commit
	// (nil without WithDelivery).
	Delivery *store.Delivery
	// Vanished, after a request to vanish (NIP-62), is what it deleted:
	// the objects of its blobs and staged uploads are the caller's to
	// delete now that the rows are gone.
	Vanished *store.Vanished
}

// maxAttempts bounds retries of a transaction that lost a deadlock or
// serialization race; the rules are re-evaluated on each attempt.
const maxAttempts = 3

// Submit checks and applies ev on behalf of authed, the pubkey that
// authenticated the request. Nothing is stored unless every rule passes. A
// rule's verdict (accepted, duplicate, refused) is the Outcome; an error
// means no verdict could be reached (the database failed or is away) and is
// the caller's to answer through reject.Map.
func (s *Service) Submit(ctx context.Context, community, authed string, ev *nostr.Event) (Outcome, error) {
	return s.SubmitAt(ctx, community, "", authed, ev)
}

// SubmitAt is Submit for a request that reached the community at origin
// (scheme://host[:port] as the client addressed it, relay.Caller.Origin):
// a request to vanish (NIP-62) must name it by host and port (or
// ALL_RELAYS), so Submit, which knows none, takes only ALL_RELAYS.
func (s *Service) SubmitAt(ctx context.Context, community, origin, authed string, ev *nostr.Event) (Outcome, error) {
	now := s.now()
	for _, p := range beforeTx {
		if err := p.check(s, ev, authed, origin, now); err != nil {
			return refused(err)
		}
	}
	p, err := s.prepare(ctx, community, int64(ev.CreatedAt))
	if err != nil {
		return Outcome{}, err
	}
	// Looked up now, as the community's key may have to be read: never
	// while the transaction holds a lock other writes (holding the
	// pool's other connections) wait for. Its failure fails only a write
	// that signs.
	var key communityKey
	key.sg, key.err = signer.For(ctx, s.signer, community)
	h, locks := lockedChannel(ev)
	end := func() {}
	if locks {
		if end, err = s.queue.wait(ctx, community+"/"+h); err != nil {
			return Outcome{}, err
		}
		defer end() // a panic too
	}
	var out []*nostr.Event
	var delivery *store.Delivery
	var verdict error
	var note string
	var vanished *store.Vanished
	var profiled bool
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		out, verdict, note, vanished, profiled = out[:0], nil, "", nil, false
		err = s.store.Tx(ctx, community, func(tx *store.Tx) error {
			if locks {
				tx.ChannelsLockFirst(h)
			}
			a := &apply{s: s, tx: tx, ev: ev, authed: authed, now: now.Unix(), key: key}
			if s.delivery != nil {
				// Asked now: the last write may commit the transaction.
				delivery = tx.DeliveriesGetAtCommit(func() store.DeliveryRequest { return s.delivery(a.committed()) })
			}
			if err := a.run(ctx); err != nil {
				return err
			}
			out, verdict, note, vanished, profiled = a.committed(), a.verdict, a.note, a.vanished, a.profiled
			return p.cover(ctx, latest(out))
		})
		if err == nil || !store.IsSerialization(err) {
			break
		}
	}
	end() // the commit went: the channel's next write may go
	if err != nil {
		if r, ok := reject.As(err); ok {
			if r.Prefix == reject.Duplicate {
				return Outcome{Accepted: true, Message: r.Error()}, nil
			}
			return refused(r)
		}
		return Outcome{}, fmt.Errorf("ingest: event %s kind %d in community %s: %w", ev.ID, ev.Kind, community, err)
	}
	if verdict != nil {
		return refused(verdict)
	}
	if profiled {
		note = s.refreshDirectory(ctx, community, note)
	}
	return Outcome{Accepted: true, Message: note, Committed: out, Delivery: delivery, Vanished: vanished}, nil
}

// refreshDirectory rewrites community's directory documents after a
// committed change of what they hold. The change holds when that fails:
// the OK says so in its note, and the next refresh shows it.
func (s *Service) refreshDirectory(ctx context.Context, community, note string) string {
	if s.directory == nil {
		return note
	}
	if err := s.directory.Refresh(ctx, community); err != nil {
		return "stored; the relay information document (NIP-11) shows it only after the directory's next refresh"
	}
	return note
}

// prepared is one write's raise of the mark.
type prepared struct {
	s         *Service
	community string
	upTo      int64 // the latest created_at it covers
}

// prepare raises the mark for events created up to upTo.
func (s *Service) prepare(ctx context.Context, community string, upTo int64) (*prepared, error) {
	p := &prepared{s: s, community: community, upTo: math.MaxInt64}
	if s.mark == nil {
		return p, nil
	}
	if err := p.raise(ctx, upTo); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *prepared) raise(ctx context.Context, upTo int64) error {
	if err := p.s.mark(ctx, p.community, upTo); err != nil {
		return fmt.Errorf("ingest: raise the mark of %s to %d: %w", p.community, upTo, err)
	}
	p.upTo = upTo
	return nil
}

// cover raises the mark to cover hi, the latest created_at the
// transaction stores, when a relay-signed event runs past it (before the
// commit, holding the lock that dated it). It raises RunAhead seconds
// further: a burst of changes to one group dates each state event a
// second after the last, and the writes behind this one then find the
// mark high enough without a request of their own while they hold the
// group's lock. A mark above every stored created_at only sends a REQ
// whose since falls in between to the database.
func (p *prepared) cover(ctx context.Context, hi int64) error {
	if hi <= p.upTo {
		return nil
	}
	return p.raise(ctx, hi+RunAhead)
}

// RunAhead is how far past a run-ahead state event cover raises the mark.
const RunAhead = 10

// lockedChannel is the channel ev's rule locks first (moderated): the one
// its h tag names, for NIP-29's moderation kinds but the create.
func lockedChannel(ev *nostr.Event) (string, bool) {
	if !kinds.Moderation(ev.Kind) || ev.Kind == kinds.CreateGroup {
		return "", false
	}
	h, ok := nip29.ChannelTag(ev.Tags)
	return h, ok && h != ""
}

// latest is the highest created_at of evs (0 for none).
func latest(evs []*nostr.Event) int64 {
	var hi int64
	for _, e := range evs {
		hi = max(hi, int64(e.CreatedAt))
	}
	return hi
}

// refused is the verdict of a rule that refused the event; an error that is
// not a rejection is no verdict.
func refused(err error) (Outcome, error) {
	if r, ok := reject.As(err); ok {
		return Outcome{Message: r.Error()}, nil
	}
	return Outcome{}, err
}

func short(pk string) string {
	if len(pk) > 12 {
		return pk[:12] + "…"
	}
	return pk
}

// communityKey is the community's relay key, or why it could not be had.
type communityKey struct {
	sg  signer.Signer
	err error
}

// apply holds one attempt at one event.
type apply struct {
	s         *Service
	tx        *store.Tx
	ev        *nostr.Event
	authed    string // the pubkey that authenticated the request
	now       int64
	key       communityKey
	published []*nostr.Event
	// verdict, when set, is the refusal the client gets although the
	// transaction commits what the rule kept (a closed group's join request
	// pending review, NIP-29).
	verdict error
	// unlisted: the client's event is neither stored nor delivered (a 9009,
	// whose codes only the relay keeps).
	unlisted bool
	// note is the message an accepted event's OK carries ("" none).
	note string
	// vanished is what a request to vanish deleted (vanish.go).
	vanished *store.Vanished
	// profiled: the community's NIP-11 fields changed (a 9033's icon), so
	// its directory documents are rewritten after the commit.
	profiled bool
	// channels are the channels this attempt read, with the sender's role
	// (saw), for filing the event in one of them.
	channels map[string]seenChannel
}

// committed is what this attempt stores once it commits: the client's
// event first, then the relay-signed ones.
func (a *apply) committed() []*nostr.Event {
	if a.unlisted {
		return append([]*nostr.Event(nil), a.published...)
	}
	return append([]*nostr.Event{a.ev}, a.published...)
}

// store inserts the client's event, filed in m's channel when it names one
// (under the group's rules: filable); a lost insert race is a duplicate.
func (a *apply) store(ctx context.Context, m records.EventMeta) error {
	if m.ChannelID != "" {
		if err := a.filable(ctx, m.ChannelID); err != nil {
			return err
		}
	}
	ok, err := a.tx.EventsInsert(ctx, a.ev, m)
	if err != nil {
		return err
	}
	if !ok {
		return reject.Duplicatef("event %s is already stored", a.ev.ID)
	}
	return nil
}

// relayKey is the community's relay key, looked up before the
// transaction.
func (a *apply) relayKey() (signer.Signer, error) {
	if a.key.err != nil {
		return nil, fmt.Errorf("ingest: relay key: %w", a.key.err)
	}
	return a.key.sg, nil
}

// sign signs and stores a relay event of kind with tags and content,
// remembered for fan-out.
func (a *apply) sign(ctx context.Context, kind int, createdAt int64, tags nostr.Tags, content string, m records.EventMeta) (*nostr.Event, error) {
	ev := &nostr.Event{Kind: kind, CreatedAt: nostr.Timestamp(createdAt), Tags: tags, Content: content}
	sg, err := a.relayKey()
	if err != nil {
		return nil, err
	}
	if err := sg.Sign(ctx, ev); err != nil {
		return nil, fmt.Errorf("ingest: sign kind %d: %w", kind, err)
	}
	if _, err := a.tx.EventsInsert(ctx, ev, m); err != nil {
		return nil, err
	}
	a.published = append(a.published, ev)
	return ev, nil
}

// replaceRelayEvent signs the community's relay event of kind at address
// d (its d tag, "" for a replaceable kind), its tags read by tags once the
// address is locked (so concurrent changes serialize and the last one
// lists them all), replacing the previous one; its created_at is
// max(now, previous+1), so the newest always wins.
func (a *apply) replaceRelayEvent(ctx context.Context, kind int, d string, tags func() (nostr.Tags, error)) error {
	return a.replaceRelayEventIn(ctx, "", kind, d, tags)
}

// replaceRelayEventIn is replaceRelayEvent for an event filed in channel
// ("" outside any), read under that channel's rule.
func (a *apply) replaceRelayEventIn(ctx context.Context, channel string, kind int, d string, tags func() (nostr.Tags, error)) error {
	sg, err := a.relayKey()
	if err != nil {
		return err
	}
	relay := sg.PublicKey()
	if err := a.tx.EventsLockAddress(ctx, kind, relay, d); err != nil {
		return err
	}
	prev, err := a.tx.EventsListAddress(ctx, kind, relay, d)
	if err != nil {
		return err
	}
	at := a.now
	var old []string
	for _, p := range prev {
		if p.CreatedAt >= at {
			at = p.CreatedAt + 1
		}
		old = append(old, p.ID)
	}
	if err := a.tx.EventsDelete(ctx, old); err != nil {
		return err
	}
	t, err := tags()
	if err != nil {
		return err
	}
	_, err = a.sign(ctx, kind, at, t, "", records.EventMeta{ChannelID: channel, DTag: d, TopLevel: true})
	return err
}

func isNotFound(err error) bool { return errors.Is(err, records.ErrNotFound) }

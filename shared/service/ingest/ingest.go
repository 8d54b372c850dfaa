// Package ingest is the write path shared by POST /events and WebSocket
// EVENT: it checks an event, applies the NIP-29 / NIP-CL / thread rules in one
// database transaction, and publishes the relay-signed state that changed.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
	"github.com/buzzrelay/relay/shared/postgres/store"
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
}

// New builds the write path over st, signing relay events with sg.
func New(st *store.Store, sg signer.Signer) *Service {
	return &Service{store: st, signer: sg, now: time.Now, sigs: sigverify.New(sigverify.Options{})}
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
// in the commit's round trip (store.Tx.DeliveryAtCommit).
func (s *Service) WithDelivery(request func([]*nostr.Event) store.DeliveryRequest) *Service {
	c := *s
	c.delivery = request
	return &c
}

// Outcome is the answer to one submitted event, in NIP-01 OK terms.
type Outcome struct {
	Accepted bool
	// Message is "" on plain success, else NIP-01 prefixed: a duplicate
	// (Accepted) or the rejection.
	Message string
	// Committed lists the events this submission stored, the client's first,
	// then relay-signed ones, for live fan-out; an ephemeral event is listed
	// though never stored. Empty unless Accepted and new.
	Committed []*nostr.Event
	// Delivery is what delivery of Committed needs, loaded by the commit
	// (nil without WithDelivery).
	Delivery *store.Delivery
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
	now := s.now()
	if err := eventcheck.Check(ev, now, s.sigs); err != nil {
		return refused(err)
	}
	if ev.PubKey != authed && !kinds.AnyAuthor(ev.Kind) {
		return refused(reject.Restrictedf("event pubkey %s is not the authenticated key", short(ev.PubKey)))
	}
	var out []*nostr.Event
	var delivery *store.Delivery
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		out = out[:0]
		err = s.store.Tx(ctx, community, func(tx *store.Tx) error {
			if err := tx.CheckBans(ctx, ev, authed); err != nil {
				return err
			}
			a := &apply{s: s, tx: tx, ev: ev, now: now.Unix()}
			if s.delivery != nil {
				// Asked now: the last write may commit the transaction.
				delivery = tx.DeliveryAtCommit(func() store.DeliveryRequest { return s.delivery(a.committed()) })
			}
			if err := a.run(ctx); err != nil {
				return err
			}
			out = a.committed()
			return nil
		})
		if err == nil || !store.IsSerialization(err) {
			break
		}
	}
	if err != nil {
		if r, ok := reject.As(err); ok {
			if r.Prefix == reject.Duplicate {
				return Outcome{Accepted: true, Message: r.Error()}, nil
			}
			return refused(r)
		}
		return Outcome{}, fmt.Errorf("ingest: event %s kind %d in community %s: %w", ev.ID, ev.Kind, community, err)
	}
	return Outcome{Accepted: true, Committed: out, Delivery: delivery}, nil
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

// apply holds one attempt at one event.
type apply struct {
	s         *Service
	tx        *store.Tx
	ev        *nostr.Event
	now       int64
	published []*nostr.Event
}

// committed is what this attempt stores once it commits: the client's
// event first, then the relay-signed ones.
func (a *apply) committed() []*nostr.Event {
	return append([]*nostr.Event{a.ev}, a.published...)
}

func (a *apply) run(ctx context.Context) error {
	// Moderation events change state before they are stored, so a repeat
	// must be caught first. Other kinds store the event before any side
	// effect, and the insert itself detects a repeat.
	if kinds.Moderation(a.ev.Kind) {
		dup, err := a.tx.Exists(ctx, a.ev.ID)
		if err != nil {
			return err
		}
		if dup {
			return reject.Duplicatef("event %s is already stored", a.ev.ID)
		}
	}
	if kinds.Ephemeral(a.ev.Kind) {
		return a.ephemeral(ctx)
	}
	if rule, ok := rules[a.ev.Kind]; ok {
		return rule(a, ctx)
	}
	if storedAsState(a.ev.Kind) {
		return a.replaceable(ctx)
	}
	return a.message(ctx)
}

// rules is the write rule of each kind with one of its own (buzzkinds.go
// adds Buzz's); every other accepted kind is kept once per address when its
// row is replaceable or addressable, else it is a channel message or a plain
// stored event (message).
var rules = map[int]func(*apply, context.Context) error{
	kinds.CreateGroup:  (*apply).createChannel,
	kinds.EditMetadata: (*apply).editChannel,
	kinds.PutUser:      (*apply).putUser,
	kinds.RemoveUser:   (*apply).removeUser,
	kinds.DeleteEvent:  (*apply).moderationDelete,
	kinds.DeleteGroup:  (*apply).deleteChannel,
	kinds.JoinRequest:  (*apply).join,
	kinds.LeaveRequest: (*apply).leave,
	kinds.Deletion:     (*apply).deletion,
	kinds.Reaction:     (*apply).reaction,
	kinds.Edit:         (*apply).edit,
	kinds.Profile:      (*apply).replaceable,
	kinds.FollowList:   (*apply).replaceable,
	kinds.GroupsList:   (*apply).replaceable,
	kinds.Article:      (*apply).replaceable,
	kinds.GiftWrap:     (*apply).giftWrap,
}

// store inserts the client's event; a lost insert race is a duplicate.
func (a *apply) store(ctx context.Context, m store.EventMeta) error {
	ok, err := a.tx.InsertEvent(ctx, a.ev, m)
	if err != nil {
		return err
	}
	if !ok {
		return reject.Duplicatef("event %s is already stored", a.ev.ID)
	}
	return nil
}

// sign signs and stores a relay event of kind with tags and content,
// remembered for fan-out.
func (a *apply) sign(ctx context.Context, kind int, createdAt int64, tags nostr.Tags, content string, m store.EventMeta) (*nostr.Event, error) {
	ev := &nostr.Event{Kind: kind, CreatedAt: nostr.Timestamp(createdAt), Tags: tags, Content: content}
	sg, err := signer.For(ctx, a.s.signer, a.tx.Community())
	if err != nil {
		return nil, fmt.Errorf("ingest: relay key: %w", err)
	}
	if err := sg.Sign(ctx, ev); err != nil {
		return nil, fmt.Errorf("ingest: sign kind %d: %w", kind, err)
	}
	if _, err := a.tx.InsertEvent(ctx, ev, m); err != nil {
		return nil, err
	}
	a.published = append(a.published, ev)
	return ev, nil
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

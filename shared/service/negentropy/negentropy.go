// Package negentropy serves NIP-77 set reconciliation (NEG-OPEN, NEG-MSG,
// NEG-CLOSE) over API Gateway's WebSocket, where no process holds a
// connection between its messages: the reconciliation's state is its
// filter, kept in the session store (shared/service/sessions) under a key
// no REQ can name, and each round recomputes the item set from it (the
// events the filter matches that the caller may see, through the read
// path's access predicate: query.Engine.Items) and answers with the
// library's negentropy (go-nostr nip77/negentropy) as the server side.
//
// The filter's until is pinned at NEG-OPEN to the relay's clock, so every
// round reconciles the same set (events stored later are not in it; one
// deleted in between leaves it, which the protocol tolerates as a
// difference). The set is bounded (relayinfo.MaxNegentropyItems: more is
// NEG-ERR "blocked:"), one outgoing frame by relayinfo.NegentropyFrameSize
// (the library splits the rest into later rounds), and an open
// reconciliation counts as one of the connection's subscriptions (the
// same per-connection and per-key limits as a REQ).
package negentropy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"
	neg "github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/sessions"
)

// Closed is NIP-77's prefix for a reconciliation the relay does not hold
// (never opened, closed, or ended by an earlier NEG-ERR).
const Closed reject.Prefix = "closed"

// Lister reads a reconciliation's item set (query.Engine.Items).
type Lister interface {
	Items(ctx context.Context, community, reader string, filters []nostr.Filter, max int) ([]store.Item, error)
}

// Caller is who reconciles: the community, the connection and its
// authenticated key ("" before AUTH).
type Caller struct {
	Community, Connection, Pubkey string
}

// Service runs reconciliations. Safe for concurrent use.
type Service struct {
	Items    Lister
	Sessions *sessions.Registry
	// MaxItems bounds the item set (0: relayinfo.MaxNegentropyItems).
	MaxItems int
	Now      func() time.Time
}

// New is the service over items and the session registry.
func New(items Lister, reg *sessions.Registry) *Service {
	return &Service{Items: items, Sessions: reg, Now: time.Now}
}

// SessionKey is the session-store subscription id of reconciliation sub
// (sessions.ReconcileKey: no REQ can name or end it, and a refusal by the
// limits quotes sub, the client's id).
func SessionKey(sub string) string { return sessions.ReconcileKey(sub) }

// Open serves NEG-OPEN: the filter checked as a REQ's, its until pinned
// to now, the item set read, the client's first message answered, and the
// reconciliation stored (replacing one of the same id) for the next
// NEG-MSG. A refusal stores nothing and ends one of the same id.
func (s *Service) Open(ctx context.Context, c Caller, sub string, f nostr.Filter, msg string) (string, error) {
	if err := CheckMessage(msg); err != nil {
		return "", s.end(ctx, c, sub, err)
	}
	now := nostr.Timestamp(s.Now().Unix())
	if f.Until == nil || *f.Until > now {
		f.Until = &now
	}
	filters := []nostr.Filter{f}
	out, err := s.round(ctx, c, filters, msg)
	if err != nil {
		return "", s.end(ctx, c, sub, err)
	}
	raw, err := json.Marshal(filters)
	if err != nil {
		return "", fmt.Errorf("negentropy: encode filter: %w", err)
	}
	row := session.NewSubscription{
		Subscription: session.Subscription{Connection: c.Connection, Sub: SessionKey(sub), Pubkey: c.Pubkey, Filters: string(raw)},
		Community:    c.Community, CreatedAt: int64(now),
		// No pins: nothing is delivered live to a reconciliation.
	}
	if err := s.Sessions.Put(ctx, row, sessions.DefaultLimits); err != nil {
		return "", err
	}
	return out, nil
}

// Message serves NEG-MSG: the stored filter's item set read again (as
// the caller may see it now) and the client's message answered. A
// refusal ends the reconciliation.
func (s *Service) Message(ctx context.Context, c Caller, sub, msg string) (string, error) {
	if err := CheckMessage(msg); err != nil {
		return "", s.end(ctx, c, sub, err)
	}
	filters, err := s.filters(ctx, c, sub)
	if err != nil {
		return "", err
	}
	out, err := s.round(ctx, c, filters, msg)
	if err != nil {
		return "", s.end(ctx, c, sub, err)
	}
	return out, nil
}

// Close serves NEG-CLOSE: the reconciliation is forgotten (nothing when
// there is none).
func (s *Service) Close(ctx context.Context, c Caller, sub string) error {
	if _, err := s.Sessions.End(ctx, c.Connection, SessionKey(sub)); err != nil {
		return fmt.Errorf("negentropy: close: %w", err)
	}
	return nil
}

// end forgets reconciliation sub after err (NIP-77: a NEG-ERR closes
// it) and returns err.
func (s *Service) end(ctx context.Context, c Caller, sub string, err error) error {
	if cerr := s.Close(ctx, c, sub); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

// filters are the stored filters of reconciliation sub of c's connection.
func (s *Service) filters(ctx context.Context, c Caller, sub string) ([]nostr.Filter, error) {
	subs, err := s.Sessions.SubscriptionsByKey(ctx, c.Community, [][2]string{{c.Connection, SessionKey(sub)}})
	if err != nil {
		return nil, fmt.Errorf("negentropy: load %s: %w", sub, err)
	}
	if len(subs) == 0 {
		return nil, reject.New(Closed, "no reconciliation %q is open on this connection; send NEG-OPEN first", clip(sub))
	}
	var filters []nostr.Filter
	if err := json.Unmarshal([]byte(subs[0].Filters), &filters); err != nil {
		return nil, fmt.Errorf("negentropy: decode stored filter of %s: %w", sub, err)
	}
	return filters, nil
}

// round reads the item set of filters for c and answers msg as the
// server side.
func (s *Service) round(ctx context.Context, c Caller, filters []nostr.Filter, msg string) (string, error) {
	max := s.MaxItems
	if max <= 0 {
		max = relayinfo.MaxNegentropyItems
	}
	items, err := s.Items.Items(ctx, c.Community, c.Pubkey, filters, max+1)
	if err != nil {
		return "", err
	}
	if len(items) > max {
		return "", reject.New(reject.Blocked, "the filter matches more than %d events, the limit of one reconciliation; narrow it (since/until, kinds, #h)", max)
	}
	return Reconcile(items, msg)
}

// Reconcile answers msg, a client's negentropy message, over items (in
// (created_at, id) order, as Lister returns them) as the protocol's
// server side (the library's), in a frame of at most
// relayinfo.NegentropyFrameSize bytes: what does not fit is left as one
// fingerprinted range for the next round. A message the library cannot
// decode is an invalid: refusal, never a panic.
func Reconcile(items []store.Item, msg string) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", reject.Invalidf("negentropy message could not be decoded")
		}
	}()
	if err := CheckMessage(msg); err != nil {
		return "", err
	}
	vec := vector.New()
	for _, it := range items {
		vec.Insert(nostr.Timestamp(it.CreatedAt), it.ID)
	}
	vec.Seal()
	out, err = neg.New(vec, relayinfo.NegentropyFrameSize).Reconcile(msg)
	if err != nil {
		return "", reject.Invalidf("negentropy message could not be decoded: %s", clip(err.Error()))
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

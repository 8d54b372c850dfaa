package push

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Accept is ingest's rule for a push subscription (30390) or lease
// (30350), run in the event's transaction before it is stored: the event
// validated (an invalid: or restricted: refusal changes nothing), it
// returns the effective state to store beside it
// (store.Tx.PushSubscriptionsUpsert) once the event is stored. Without
// leases on (no gateway, no executor key: nothing advertised in NIP-11) a
// lease has no state: nil, and it is stored as the author-only event it is
// on a relay without push. The key's lock (store.Tx.PushSubscriptionsLockKey)
// is held from before its limits are counted to the commit, so they hold
// under concurrency.
func (s *Service) Accept(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64) (*store.PushSubscription, error) {
	var row *store.PushSubscription
	var err error
	switch ev.Kind {
	case kinds.PushSubscription:
		if err := tx.PushSubscriptionsLockKey(ctx, ev.PubKey, ev.Kind); err != nil {
			return nil, err
		}
		row, err = s.acceptSubscription(ctx, tx, ev, now)
	case kinds.PushLease:
		if !s.LeasesOn() {
			return nil, nil
		}
		if err := tx.PushSubscriptionsLockKey(ctx, ev.PubKey, ev.Kind); err != nil {
			return nil, err
		}
		row, err = s.acceptLease(ctx, tx, ev, now)
	default:
		return nil, fmt.Errorf("push: kind %d is not a push subscription", ev.Kind)
	}
	if err != nil {
		return nil, err
	}
	s.markActive(tx.Community())
	return row, nil
}

// acceptSubscription validates a NIP-9a subscription: the rules of
// push.ParseSubscription, not already expired, and at most
// push.MaxSubscriptionsPerKey live addresses per key.
func (s *Service) acceptSubscription(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64) (*store.PushSubscription, error) {
	hosts, err := s.hosts(ctx, tx.Community())
	if err != nil {
		return nil, err
	}
	sub, err := push.ParseSubscription(ev, hosts, s.Policy)
	if err != nil {
		return nil, err
	}
	if sub.ExpiresAt != 0 && sub.ExpiresAt <= now {
		return nil, reject.Invalidf("push subscription: already expired")
	}
	n, err := tx.PushSubscriptionsCount(ctx, ev.PubKey, ev.Kind, sub.D, now)
	if err != nil {
		return nil, err
	}
	if n >= push.MaxSubscriptionsPerKey {
		return nil, reject.Restrictedf("push subscription: at most %d per key; replace or delete one", push.MaxSubscriptionsPerKey)
	}
	filters, err := json.Marshal(sub.Filters)
	if err != nil {
		return nil, fmt.Errorf("push: encode filters: %w", err)
	}
	ignore, err := json.Marshal(sub.Ignore)
	if err != nil {
		return nil, fmt.Errorf("push: encode ignore filters: %w", err)
	}
	return &store.PushSubscription{
		Pubkey: ev.PubKey, Kind: ev.Kind, D: sub.D, EventID: ev.ID,
		Filters: filters, Ignore: ignore, Target: sub.Callback, Relay: sub.Relay,
		IncludeEvent: sub.IncludeEvent, Active: true, ExpiresAt: sub.ExpiresAt,
	}, nil
}

// hosts are community's hostnames, else BUZZ_PUBLIC_URL's host, else none
// (a community served on any host, as make dev's default: any relay URL).
func (s *Service) hosts(ctx context.Context, community string) ([]string, error) {
	if s.Communities == nil {
		return nil, nil
	}
	c, err := s.Communities.Serving(ctx, community)
	if err != nil {
		return nil, err
	}
	if len(c.Hosts) == 0 && s.PublicHost != "" {
		return []string{s.PublicHost}, nil
	}
	return c.Hosts, nil
}

package push

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
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
	if self, sealed := push.Sealed(ev); sealed {
		if ev, err = s.unseal(ctx, tx.Community(), self, ev); err != nil {
			return nil, err
		}
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

// conversationKeys is a relay key that opens what NIP-44 encrypted to it
// (signer.Key: the local key and KMS's, opened in memory).
type conversationKeys interface {
	ConversationKey(pub string) ([32]byte, error)
}

// unseal opens a subscription of NIP-9a's sealed form (push.Sealed):
// sealed to community's relay key, the one NIP-11 names self, and
// decrypted with it; ev read as its public d and its sealed tags
// (push.Unseal). The stored event keeps its sealed content.
func (s *Service) unseal(ctx context.Context, community, self string, ev *nostr.Event) (*nostr.Event, error) {
	if s.Relay == nil {
		return nil, reject.Restrictedf("push subscription: sealed subscriptions are not served here; send relay, filter and callback as tags")
	}
	if len(ev.Content) > push.MaxSealedContent {
		return nil, reject.Invalidf("push subscription: sealed content is over %d bytes", push.MaxSealedContent)
	}
	sg, err := signer.For(ctx, s.Relay, community)
	if err != nil {
		return nil, fmt.Errorf("push: relay key of %s: %w", community, err)
	}
	if self != sg.PublicKey() {
		return nil, reject.Invalidf("push subscription: the p tag must name this relay's self key %s", sg.PublicKey())
	}
	keys, ok := sg.(conversationKeys)
	if !ok {
		return nil, reject.Restrictedf("push subscription: sealed subscriptions are not served here; send relay, filter and callback as tags")
	}
	conv, err := keys.ConversationKey(ev.PubKey)
	if err != nil {
		return nil, reject.Invalidf("push subscription: the sealed content does not open with this relay's key")
	}
	plain, err := nip44.Decrypt(ev.Content, conv)
	if err != nil {
		return nil, reject.Invalidf("push subscription: the sealed content does not open with this relay's key")
	}
	return push.Unseal(ev, plain)
}

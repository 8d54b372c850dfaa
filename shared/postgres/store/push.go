package store

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Push notifications (migrations/019): the effective state of each stored
// NIP-9a subscription (30390) and NIP-PL lease (30350) in
// push_subscriptions, written by the event's own transaction;
// shared/service/push decides, these execute. Deliveries are in
// pushdeliveries.go.

// PushSubscription is one row of push_subscriptions.
type PushSubscription struct {
	Pubkey  string
	Kind    int
	D       string
	EventID string
	// Filters and Ignore are JSON arrays of NIP-01 filters.
	Filters, Ignore json.RawMessage
	// Target is the callback URL (30390) or the endpoint grant (30350).
	Target string
	// Relay is a 30390's relay tag, which its callbacks carry back.
	Relay        string
	IncludeEvent bool
	Generation   int64
	Active       bool
	ExpiresAt    int64 // 0: none
}

// PushAddress names one subscription: its author, kind and d.
type PushAddress struct {
	Pubkey string
	Kind   int
	D      string
}

// Address is s's address.
func (s *PushSubscription) Address() PushAddress {
	return PushAddress{Pubkey: s.Pubkey, Kind: s.Kind, D: s.D}
}

// PushSubscriptionsUpsert stores s as the effective state of its address
// in the transaction's community: a new version replaces the old one and
// starts with no failures, not dropped.
func (t *Tx) PushSubscriptionsUpsert(ctx context.Context, s PushSubscription) error {
	var exp *int64
	if s.ExpiresAt > 0 {
		exp = &s.ExpiresAt
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO push_subscriptions
  (community_id, pubkey, kind, d_tag, event_id, filters, ignore, target, include_event, generation, active, expires_at, relay)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (community_id, pubkey, kind, d_tag) DO UPDATE SET
  event_id = excluded.event_id, filters = excluded.filters, ignore = excluded.ignore, target = excluded.target,
  include_event = excluded.include_event, generation = excluded.generation, active = excluded.active,
  expires_at = excluded.expires_at, relay = excluded.relay, failures = 0, dropped_at = NULL`,
		t.community, s.Pubkey, s.Kind, s.D, s.EventID, jsonOrEmpty(s.Filters), jsonOrEmpty(s.Ignore), s.Target,
		s.IncludeEvent, s.Generation, s.Active, exp, s.Relay)
	if err != nil {
		return errorf("store push subscription %s/%d/%s: %w", s.Pubkey, s.Kind, s.D, err)
	}
	return nil
}

func jsonOrEmpty(b json.RawMessage) string {
	if len(b) == 0 {
		return "[]"
	}
	return string(b)
}

// pushSubscriptionLive is "push subscription row alias (with its dot, or
// "") is live at the time bound at now": active, not dropped and not
// expired (unexpiredAt).
func pushSubscriptionLive(alias, now string) string {
	return alias + "active AND " + alias + "dropped_at IS NULL AND " + unexpiredAt(alias, now)
}

// pushSubscriptionEventStored is "the 30390 of push subscription row s is
// still stored (not deleted)".
const pushSubscriptionEventStored = `EXISTS (SELECT 1 FROM events e WHERE e.community_id = s.community_id AND e.id = s.event_id AND e.` + notDeleted + `)`

// PushSubscriptionsLockKey takes the transaction-scoped lock of pubkey's
// subscriptions of kind in the transaction's community: the per-key
// limits (push.MaxSubscriptionsPerKey, push.MaxLeasesPerKey) and NIP-PL's
// one lease per endpoint are exact under concurrency, as the session
// store's per-key limit is. Concurrent 30390s of one key apply one after
// another; PushSubscriptionsCount and PushSubscriptionsExistsTarget, each
// a statement of its own under READ COMMITTED run after the lock was
// granted, see every subscription committed before it.
func (t *Tx) PushSubscriptionsLockKey(ctx context.Context, pubkey string, kind int) error {
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('push-key/' || $1 || '/' || $2 || '/' || $3, 0))`,
		t.community, pubkey, strconv.Itoa(kind)); err != nil {
		return errorf("lock push subscriptions of %s: %w", pubkey, err)
	}
	return nil
}

// PushSubscriptionsCount counts pubkey's live subscriptions of kind in the
// transaction's community other than the one at d (active, not dropped,
// not expired at now, its event still stored).
func (t *Tx) PushSubscriptionsCount(ctx context.Context, pubkey string, kind int, d string, now int64) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM push_subscriptions s
WHERE s.community_id = $1 AND s.pubkey = $2 AND s.kind = $3 AND s.d_tag <> $4
  AND `+pushSubscriptionLive("s.", "$5")+` AND `+pushSubscriptionEventStored,
		t.community, pubkey, kind, d, now).Scan(&n)
	if err != nil {
		return 0, errorf("count push subscriptions of %s: %w", pubkey, err)
	}
	return n, nil
}

// PushSubscriptionsGetGeneration is the generation watermark of the lease at
// (pubkey, kind, d) in the transaction's community, locked until the
// transaction ends (found false: none stored yet).
func (t *Tx) PushSubscriptionsGetGeneration(ctx context.Context, a PushAddress) (gen int64, found bool, err error) {
	err = t.tx.QueryRow(ctx, `SELECT generation FROM push_subscriptions
WHERE community_id = $1 AND pubkey = $2 AND kind = $3 AND d_tag = $4 FOR UPDATE`,
		t.community, a.Pubkey, a.Kind, a.D).Scan(&gen)
	if notFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, errorf("lease generation of %s/%s: %w", a.Pubkey, a.D, err)
	}
	return gen, true, nil
}

// PushSubscriptionsExists reports whether community has any live
// subscription or lease: whether its commits need matching at all.
func (s *Store) PushSubscriptionsExists(ctx context.Context, community string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM push_subscriptions
WHERE community_id = $1 AND active AND dropped_at IS NULL)`, community).Scan(&ok)
	if err != nil {
		return false, errorf("push subscriptions of %s: %w", community, err)
	}
	return ok, nil
}

// PushSubscriptionsListLive are community's subscriptions and leases that may
// match at now: active, not dropped, not expired, and their event still
// stored and not deleted.
func (s *Store) PushSubscriptionsListLive(ctx context.Context, community string, now int64) ([]PushSubscription, error) {
	rows, err := s.pool.Query(ctx, `SELECT s.pubkey, s.kind, s.d_tag, s.event_id, s.filters, s.ignore, s.target,
  s.include_event, s.generation, s.active, coalesce(s.expires_at, 0), s.relay
FROM push_subscriptions s
WHERE s.community_id = $1 AND `+pushSubscriptionLive("s.", "$2")+` AND `+pushSubscriptionEventStored,
		community, now)
	if err != nil {
		return nil, errorf("live push subscriptions of %s: %w", community, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PushSubscription, error) {
		var p PushSubscription
		err := r.Scan(&p.Pubkey, &p.Kind, &p.D, &p.EventID, &p.Filters, &p.Ignore, &p.Target,
			&p.IncludeEvent, &p.Generation, &p.Active, &p.ExpiresAt, &p.Relay)
		return p, err
	})
	if err != nil {
		return nil, errorf("live push subscriptions of %s: %w", community, err)
	}
	return out, nil
}

// PushSubscriptionsSetFailed records one dead delivery of a's subscription
// and drops it (dropped_at = now) when drop is set or its dead deliveries
// in a row reach dropAfter; it reports whether it is dropped now.
func (s *Store) PushSubscriptionsSetFailed(ctx context.Context, community string, a PushAddress, drop bool, dropAfter int, now int64) (bool, error) {
	var dropped bool
	err := s.pool.QueryRow(ctx, `UPDATE push_subscriptions SET failures = failures + 1,
  dropped_at = CASE WHEN $5 OR failures + 1 >= $6 THEN coalesce(dropped_at, $7) ELSE dropped_at END
WHERE community_id = $1 AND pubkey = $2 AND kind = $3 AND d_tag = $4
RETURNING dropped_at IS NOT NULL`, community, a.Pubkey, a.Kind, a.D, drop, dropAfter, now).Scan(&dropped)
	if notFound(err) {
		return false, nil
	}
	if err != nil {
		return false, errorf("record push failure of %s/%s: %w", a.Pubkey, a.D, err)
	}
	return dropped, nil
}

// PushSubscriptionsSetSucceeded clears a's failures in a row.
func (s *Store) PushSubscriptionsSetSucceeded(ctx context.Context, community string, a PushAddress) error {
	_, err := s.pool.Exec(ctx, `UPDATE push_subscriptions SET failures = 0
WHERE community_id = $1 AND pubkey = $2 AND kind = $3 AND d_tag = $4 AND failures <> 0`, community, a.Pubkey, a.Kind, a.D)
	if err != nil {
		return errorf("clear push failures of %s/%s: %w", a.Pubkey, a.D, err)
	}
	return nil
}

// PushSubscriptionsExistsTarget reports whether another active, live lease
// of pubkey (kind, another d) already holds target: NIP-PL's endpoint
// uniqueness, checked in the accepting transaction.
func (t *Tx) PushSubscriptionsExistsTarget(ctx context.Context, a PushAddress, target string, now int64) (bool, error) {
	var taken bool
	err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM push_subscriptions
WHERE community_id = $1 AND pubkey = $2 AND kind = $3 AND d_tag <> $4 AND target = $5
  AND `+pushSubscriptionLive("", "$6")+`)`,
		t.community, a.Pubkey, a.Kind, a.D, target, now).Scan(&taken)
	if err != nil {
		return false, errorf("lease endpoint of %s: %w", a.Pubkey, err)
	}
	return taken, nil
}

// CommunitiesGetPushKey reads community's sealed NIP-PL executor key (nil and
// "" while it has none).
func (s *Store) CommunitiesGetPushKey(ctx context.Context, community string) ([]byte, string, error) {
	var ct []byte
	var pub *string
	err := s.pool.QueryRow(ctx, `SELECT push_key_ciphertext, push_key_pubkey FROM communities WHERE id = $1`, community).Scan(&ct, &pub)
	if err != nil {
		return nil, "", errorf("executor key of community %q: %w", community, err)
	}
	if pub == nil {
		return nil, "", nil
	}
	return ct, *pub, nil
}

// CommunitiesSetPushKey stores community's sealed executor key unless it
// has one already (the first of two racing instances wins; the other reads
// the winner's).
func (s *Store) CommunitiesSetPushKey(ctx context.Context, community string, ct []byte, pub string) error {
	_, err := s.pool.Exec(ctx, `UPDATE communities SET push_key_ciphertext = $2, push_key_pubkey = $3
WHERE id = $1 AND push_key_ciphertext IS NULL`, community, ct, pub)
	if err != nil {
		return errorf("store executor key of %s: %w", community, err)
	}
	return nil
}

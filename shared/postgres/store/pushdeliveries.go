package store

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Push deliveries (migrations/019's push_deliveries): one row per (event,
// subscription), inserted once by the matcher and moved from pending to
// sent, dead or skipped by the sender.

// PushEvent is one stored, not deleted event as push delivery needs it.
type PushEvent struct {
	ID, Raw, Channel string
	System           bool
}

// EventsListForPush reads the stored, not deleted events of ids in community,
// with their channel and whether it is a system channel.
func (s *Store) EventsListForPush(ctx context.Context, community string, ids []string) (map[string]PushEvent, error) {
	out := map[string]PushEvent{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT e.id, e.raw, coalesce(e.channel_id, ''), coalesce(c.channel_type = 'system', false)
FROM events e LEFT JOIN channels c ON c.community_id = e.community_id AND c.id = e.channel_id
WHERE e.community_id = $1 AND e.id = ANY ($2::text[]) AND e.`+notDeleted, community, ids)
	if err != nil {
		return nil, errorf("push events: %w", err)
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PushEvent, error) {
		var e PushEvent
		err := r.Scan(&e.ID, &e.Raw, &e.Channel, &e.System)
		return e, err
	})
	if err != nil {
		return nil, errorf("push events: %w", err)
	}
	for _, e := range evs {
		out[e.ID] = e
	}
	return out, nil
}

// PushDelivery is one (event, subscription) delivery.
type PushDelivery struct {
	EventID string
	PushAddress
	Target string
}

// PushDeliveriesInsert stores ds as pending, due at now; a delivery
// already stored (the same batch matched again) is left as it is. It
// returns how many were new.
func (s *Store) PushDeliveriesInsert(ctx context.Context, community string, ds []PushDelivery, now int64) (int, error) {
	if len(ds) == 0 {
		return 0, nil
	}
	ev, pk, kd, d, tg := make([]string, len(ds)), make([]string, len(ds)), make([]int32, len(ds)), make([]string, len(ds)), make([]string, len(ds))
	for i, x := range ds {
		ev[i], pk[i], kd[i], d[i], tg[i] = x.EventID, x.Pubkey, int32(x.Kind), x.D, x.Target
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO push_deliveries (community_id, event_id, pubkey, kind, d_tag, target, next_at, created_at)
SELECT $1, x.ev, x.pk, x.kd, x.d, x.tg, $7, $7
FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::text[]) AS x(ev, pk, kd, d, tg)
ON CONFLICT DO NOTHING`, community, ev, pk, kd, d, tg, now)
	if err != nil {
		return 0, errorf("store push deliveries: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// PendingPush is a pending delivery with what sending it needs.
type PendingPush struct {
	PushDelivery
	Attempts     int
	NextAt       int64
	IncludeEvent bool
	// Live: the subscription still stands (active, not dropped, not
	// expired at now, same target, its event still stored).
	Live bool
}

// PushDeliveriesListPending are the pending deliveries of events ids in
// community, oldest first, with their subscription's state at now.
func (s *Store) PushDeliveriesListPending(ctx context.Context, community string, ids []string, now int64) ([]PendingPush, error) {
	rows, err := s.pool.Query(ctx, `SELECT d.event_id, d.pubkey, d.kind, d.d_tag, d.target, d.attempts, d.next_at,
  coalesce(s.include_event, false),
  coalesce(`+pushSubscriptionLive("s.", "$3")+` AND s.target = d.target
    AND `+pushSubscriptionEventStored+`, false)
FROM push_deliveries d
LEFT JOIN push_subscriptions s ON s.community_id = d.community_id AND s.pubkey = d.pubkey AND s.kind = d.kind AND s.d_tag = d.d_tag
WHERE d.community_id = $1 AND d.event_id = ANY ($2::text[]) AND d.state = 'pending'
ORDER BY d.created_at, d.event_id, d.pubkey, d.d_tag`, community, ids, now)
	if err != nil {
		return nil, errorf("pending push deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PendingPush, error) {
		var p PendingPush
		err := r.Scan(&p.EventID, &p.Pubkey, &p.Kind, &p.D, &p.Target, &p.Attempts, &p.NextAt, &p.IncludeEvent, &p.Live)
		return p, err
	})
	if err != nil {
		return nil, errorf("pending push deliveries: %w", err)
	}
	return out, nil
}

// Push delivery states (push_deliveries.state).
const (
	PushSent    = "sent"
	PushDead    = "dead"
	PushSkipped = "skipped"
	PushPending = "pending"
)

// PushDeliveriesSet moves a pending delivery to state, with its attempts
// and next due time (sent_at = now when sent). It reports whether the row
// was still pending: a delivery is finished once.
func (s *Store) PushDeliveriesSet(ctx context.Context, community string, d PushDelivery, state string, attempts int, nextAt, now int64) (bool, error) {
	var sentAt *int64
	if state == PushSent {
		sentAt = &now
	}
	tag, err := s.pool.Exec(ctx, `UPDATE push_deliveries SET state = $6, attempts = $7, next_at = $8, sent_at = $9
WHERE community_id = $1 AND event_id = $2 AND pubkey = $3 AND kind = $4 AND d_tag = $5 AND state = 'pending'`,
		community, d.EventID, d.Pubkey, d.Kind, d.D, state, attempts, nextAt, sentAt)
	if err != nil {
		return false, errorf("set push delivery %s→%s: %w", d.EventID, d.Pubkey, err)
	}
	return tag.RowsAffected() == 1, nil
}

// PushDeliveriesClaim takes a due pending delivery for one try: its next
// due time moves to until, so that a concurrent run (a duplicate
// invocation) does not send it too, and a run that crashed mid-try leaves
// it due again at until. It reports whether this run has it.
func (s *Store) PushDeliveriesClaim(ctx context.Context, community string, d PushDelivery, now, until int64) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE push_deliveries SET next_at = $7
WHERE community_id = $1 AND event_id = $2 AND pubkey = $3 AND kind = $4 AND d_tag = $5 AND state = 'pending' AND next_at <= $6`,
		community, d.EventID, d.Pubkey, d.Kind, d.D, now, until)
	if err != nil {
		return false, errorf("claim push delivery %s→%s: %w", d.EventID, d.Pubkey, err)
	}
	return tag.RowsAffected() == 1, nil
}

// PushRate is one per-minute cap a delivery counts against: its scope
// (a callback host, a lease endpoint, a community) and how many tries the
// scope may take per minute.
type PushRate struct {
	Scope     string
	PerMinute int
}

// PushRatesTake counts one try against every rate of rates in minute (unix
// minutes), all or none: it reports false, and counts nothing, when one of
// them already took its PerMinute this minute. Exact under concurrency:
// each conditional upsert takes its counter's row lock, in scope order,
// and a refusal rolls the others back.
func (s *Store) PushRatesTake(ctx context.Context, minute int64, rates []PushRate) (bool, error) {
	rs := slices.Clone(rates)
	slices.SortFunc(rs, func(a, b PushRate) int { return strings.Compare(a.Scope, b.Scope) })
	took := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, r := range rs {
			var n int
			err := tx.QueryRow(ctx, `INSERT INTO push_rates (scope, minute, n) VALUES ($1, $2, 1)
ON CONFLICT (scope, minute) DO UPDATE SET n = push_rates.n + 1 WHERE push_rates.n < $3
RETURNING n`, r.Scope, minute, r.PerMinute).Scan(&n)
			if notFound(err) {
				return errRateFull
			}
			if err != nil {
				return err
			}
		}
		took = true
		return nil
	})
	if errors.Is(err, errRateFull) {
		return false, nil
	}
	if err != nil {
		return false, errorf("take push rates: %w", err)
	}
	return took, nil
}

// errRateFull rolls PushRatesTake's transaction back.
var errRateFull = errors.New("push rate full")

// PushRatesDelete deletes the counters of minutes before minute.
func (s *Store) PushRatesDelete(ctx context.Context, before int64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM push_rates WHERE minute < $1`, before); err != nil {
		return errorf("delete old push rates: %w", err)
	}
	return nil
}

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
	// Xact is the transaction that stored it (events.xact): a run of the
	// sender looks for events stored after its batch's (EventsListForPushAfter).
	Xact int64
}

// EventsListForPush reads the stored, not deleted events of ids in community,
// with their channel and whether it is a system channel.
func (s *Store) EventsListForPush(ctx context.Context, community string, ids []string) (map[string]PushEvent, error) {
	out := map[string]PushEvent{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, pushEventsSelect+`
WHERE e.community_id = $1 AND e.id = ANY ($2::text[]) AND e.`+notDeleted, community, ids)
	return collectPushEvents(rows, err, out)
}

// pushEventsSelect is the columns a PushEvent is read from.
const pushEventsSelect = `SELECT e.id, e.raw, coalesce(e.channel_id, ''), coalesce(c.channel_type = 'system', false), e.xact
FROM events e LEFT JOIN channels c ON c.community_id = e.community_id AND c.id = e.channel_id`

func collectPushEvents(rows pgx.Rows, err error, out map[string]PushEvent) (map[string]PushEvent, error) {
	if err != nil {
		return nil, errorf("push events: %w", err)
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PushEvent, error) {
		var e PushEvent
		err := r.Scan(&e.ID, &e.Raw, &e.Channel, &e.System, &e.Xact)
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

// EventsListForPushAfter reads at most limit stored, not deleted events of
// community stored by transactions after xact (oldest first), but
// subscriptions and leases themselves (30390, 30350: author-only, never
// pushed): what commits after a batch's stored, for a run of the sender
// that is still busy to send before their own runs start. Their own runs
// still come (the fan-out invoked them): this is a head start, never the
// only way an event is matched, so an event of a transaction with a lower
// id that commits later, which it misses, loses nothing.
func (s *Store) EventsListForPushAfter(ctx context.Context, community string, xact int64, limit int) (map[string]PushEvent, error) {
	rows, err := s.pool.Query(ctx, pushEventsSelect+`
WHERE e.community_id = $1 AND e.xact > $2 AND e.kind NOT IN (30350, 30390) AND e.`+notDeleted+`
ORDER BY e.xact LIMIT $3`, community, xact, limit)
	return collectPushEvents(rows, err, map[string]PushEvent{})
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

// PushDeliveriesSetSkipped finishes a due delivery that no run holds
// (pending, next_at <= now) as skipped: nothing is sent. It reports whether
// it did (a run that claimed it meanwhile keeps it).
func (s *Store) PushDeliveriesSetSkipped(ctx context.Context, community string, d PushDelivery, now int64) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE push_deliveries SET state = 'skipped', next_at = $6
WHERE community_id = $1 AND event_id = $2 AND pubkey = $3 AND kind = $4 AND d_tag = $5 AND state = 'pending' AND next_at <= $6`,
		community, d.EventID, d.Pubkey, d.Kind, d.D, now)
	if err != nil {
		return false, errorf("skip push delivery %s→%s: %w", d.EventID, d.Pubkey, err)
	}
	return tag.RowsAffected() == 1, nil
}

// PushDeliveriesSetClaimed records the outcome of the try a claim
// (PushDeliveriesClaim) took, in its own transaction: state, attempts and
// the next due time (sent_at = now when sent). The claim is its fence: the
// row changes only while it is pending and still holds that claim (next_at
// = the claim's until), so a try whose claim lapsed and was taken by
// another run records nothing over that run's. It reports whether it did.
func (s *Store) PushDeliveriesSetClaimed(ctx context.Context, community string, c PushClaim, state string, attempts int, nextAt, now int64) (bool, error) {
	var sentAt *int64
	if state == PushSent {
		sentAt = &now
	}
	d := c.Delivery
	tag, err := s.pool.Exec(ctx, `UPDATE push_deliveries SET state = $6, attempts = $7, next_at = $8, sent_at = $9
WHERE community_id = $1 AND event_id = $2 AND pubkey = $3 AND kind = $4 AND d_tag = $5 AND state = 'pending' AND next_at = $10`,
		community, d.EventID, d.Pubkey, d.Kind, d.D, state, attempts, nextAt, sentAt, c.Until)
	if err != nil {
		return false, errorf("set push delivery %s→%s: %w", d.EventID, d.Pubkey, err)
	}
	return tag.RowsAffected() == 1, nil
}

// PushClaim is one run's hold on one delivery for one try.
type PushClaim struct {
	Delivery PushDelivery
	// Until is when the claim lapses (the row's next_at while it holds):
	// a run that crashed mid-try leaves the delivery due again then.
	Until int64
	// Attempts are the tries made before this one.
	Attempts int
}

// PushClaimResult is what PushDeliveriesClaim came to.
type PushClaimResult int

const (
	// PushClaimTaken: this run holds the delivery until PushClaim.Until,
	// and the try is counted against every rate.
	PushClaimTaken PushClaimResult = iota
	// PushClaimHeld: not this run's: another run holds it, or it is no
	// longer due or pending.
	PushClaimHeld
	// PushClaimRateFull: a rate took its PerMinute this minute: nothing
	// counted, no attempt, the delivery due again at the next minute.
	PushClaimRateFull
)

// PushDeliveriesClaim takes a due pending delivery for one try and counts
// the try against rates in minute (unix minutes), in one transaction
// committed before anything is sent: its next_at moves to until, so no
// other run or goroutine sends it while the claim stands (the conditional
// update takes the row's lock: of two claims one wins), and a run that
// crashed after the claim leaves it due again at until. When a rate is
// full (takeRates' rule, all or none), the rates count nothing and the
// delivery is left pending, due at nextMinute.
func (s *Store) PushDeliveriesClaim(ctx context.Context, community string, d PushDelivery, now, until, minute int64, rates []PushRate) (PushClaim, PushClaimResult, error) {
	c := PushClaim{Delivery: d, Until: until}
	res := PushClaimHeld
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE push_deliveries SET next_at = $7
WHERE community_id = $1 AND event_id = $2 AND pubkey = $3 AND kind = $4 AND d_tag = $5 AND state = 'pending' AND next_at <= $6
RETURNING attempts`, community, d.EventID, d.Pubkey, d.Kind, d.D, now, until).Scan(&c.Attempts)
		if notFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		took, err := takeRates(ctx, tx, minute, rates)
		if err != nil {
			return err
		}
		if took {
			res = PushClaimTaken
			return nil
		}
		res = PushClaimRateFull
		_, err = tx.Exec(ctx, `UPDATE push_deliveries SET next_at = $6
WHERE community_id = $1 AND event_id = $2 AND pubkey = $3 AND kind = $4 AND d_tag = $5`, community, d.EventID, d.Pubkey, d.Kind, d.D, (minute+1)*60)
		return err
	})
	if err != nil {
		return c, PushClaimHeld, errorf("claim push delivery %s→%s: %w", d.EventID, d.Pubkey, err)
	}
	return c, res, nil
}

// PushRate is one per-minute cap a delivery counts against: its scope
// (a callback host, a lease endpoint, a community) and how many tries the
// scope may take per minute.
type PushRate struct {
	Scope     string
	PerMinute int
}

// takeRates counts one try against every rate of rates in minute (unix
// minutes), all or none: false, and nothing counted, when one of them
// already took its PerMinute this minute; inside tx, in a savepoint that a
// full rate rolls back (the rest of tx stands). The counters' row locks are taken
// in one order by every caller (no deadlock): scopes descending, so the
// community's counter, which every try of the community takes, comes
// last and is held for the shortest time (host/ and endpoint/ sort after
// community/).
func takeRates(ctx context.Context, tx pgx.Tx, minute int64, rates []PushRate) (bool, error) {
	rs := slices.Clone(rates)
	slices.SortFunc(rs, func(a, b PushRate) int { return strings.Compare(b.Scope, a.Scope) })
	err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
		for _, r := range rs {
			var n int
			err := sp.QueryRow(ctx, `INSERT INTO push_rates (scope, minute, n) VALUES ($1, $2, 1)
ON CONFLICT (scope, minute) DO UPDATE SET n = push_rates.n + 1 WHERE push_rates.n < $3
RETURNING n`, r.Scope, minute, r.PerMinute).Scan(&n)
			if notFound(err) {
				return errRateFull
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errRateFull) {
		return false, nil
	}
	return err == nil, err
}

// errRateFull rolls takeRates' savepoint back.
var errRateFull = errors.New("push rate full")

// PushRatesDelete deletes the counters of minutes before minute.
func (s *Store) PushRatesDelete(ctx context.Context, before int64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM push_rates WHERE minute < $1`, before); err != nil {
		return errorf("delete old push rates: %w", err)
	}
	return nil
}

package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// SubscribeVerdict is what Subscribe did with a subscription.
type SubscribeVerdict int

// Subscribe's verdicts.
const (
	Stored         SubscribeVerdict = iota
	ConnectionFull                  // refused: the connection holds its limit
	KeyFull                         // refused: the key holds its limit in the community
	// UnknownConnection: refused, no live connection of that id (never
	// opened, closed, or past its expiry at the subscription's CreatedAt).
	UnknownConnection
)

// SubscribeLimits bound Subscribe; 0 is no limit.
type SubscribeLimits struct {
	// PerConnection bounds a connection's subscriptions, PerKey a key's in
	// its community (across its connections).
	PerConnection, PerKey int
}

// SubscriptionsInsert stores (or replaces) s, numbering it anew from
// ws_subscriptions_seq (see AudienceListPart), in one round trip: a
// transaction that locks the connection's row (and, with a per-key limit,
// the key's advisory lock), counts its other subscriptions, upserts s only
// when they are under lim, and makes its channel index rows exactly s.Pins
// (queueSubscribe). A refusal changes nothing.
func (st *Store) SubscriptionsInsert(ctx context.Context, s session.NewSubscription, lim SubscribeLimits) (SubscribeVerdict, error) {
	b := &pgx.Batch{}
	v := queueSubscribe(b, s, lim)
	err := st.pool.SendBatch(ctx, b).Close()
	if err != nil {
		return 0, errorf("store subscription: %w", err)
	}
	return *v, nil
}

// queueSubscribe queues on b the transaction that stores s (Subscribe) and
// returns where its verdict lands once b's results are read. The limits
// are exact under concurrency: the lock on the connection's row (no key
// update, so the foreign keys' key-share locks pass) orders concurrent
// subscribes of one connection, the key's transaction-level advisory lock
// those of one key, and the counts after them, a statement of their own
// under READ COMMITTED, see every subscription committed before the locks
// were granted. One statement alone could not: its snapshot predates the
// locks it waits for.
func queueSubscribe(b *pgx.Batch, s session.NewSubscription, lim SubscribeLimits) *SubscribeVerdict {
	v := new(SubscribeVerdict)
	b.Queue("BEGIN")
	b.Queue(`SELECT 1 FROM ws_connections WHERE id = $1 FOR NO KEY UPDATE`, s.Connection)
	if lim.PerKey > 0 {
		b.Queue(`SELECT pg_advisory_xact_lock(hashtextextended('ws-key/' || $1 || '/' || $2, 0))`, s.Community, s.Pubkey)
	}
	b.Queue(subscribeSQL, s.Connection, s.Sub, s.Community, s.Pubkey, s.Filters, s.CreatedAt, nonNil(s.Pins),
		lim.PerConnection, lim.PerKey).
		QueryRow(func(row pgx.Row) error { return row.Scan(v) })
	b.Queue("COMMIT")
	return v
}

// subscribeSQL counts the connection's other subscriptions ($1, other than
// $2) and, with a per-key limit ($9 > 0), the key's ($4) other ones in the
// community ($3); it upserts the subscription when the connection is live
// at its creation ($6) and they are under $8 and $9 (0: no limit), and
// makes its channel index rows exactly $7; it returns its
// SubscribeVerdict.
const subscribeSQL = `
WITH live AS (
  SELECT 1 FROM ws_connections WHERE id = $1 AND expires_at > $6
), others AS (
  SELECT count(*) AS n FROM ws_subscriptions WHERE connection_id = $1 AND sub_id <> $2
), keyed AS (
  SELECT count(*) AS n FROM ws_subscriptions
  WHERE $9::integer > 0 AND community_id = $3 AND pubkey = $4 AND NOT (connection_id = $1 AND sub_id = $2)
), s AS (
  INSERT INTO ws_subscriptions (connection_id, sub_id, community_id, pubkey, filters, created_at)
  SELECT $1, $2, $3, $4, $5, $6 FROM live, others, keyed
  WHERE ($8::integer <= 0 OR others.n < $8) AND ($9::integer <= 0 OR keyed.n < $9)
  ON CONFLICT (connection_id, sub_id) DO UPDATE SET community_id = EXCLUDED.community_id,
    pubkey = EXCLUDED.pubkey, filters = EXCLUDED.filters, created_at = EXCLUDED.created_at,
    seq = EXCLUDED.seq
  RETURNING connection_id, sub_id
), stale AS (
  DELETE FROM ws_subscription_channels k USING s
  WHERE k.connection_id = s.connection_id AND k.sub_id = s.sub_id
    AND NOT (k.community_id = $3 AND k.channel_id = ANY($7::text[]))
), fresh AS (
  INSERT INTO ws_subscription_channels (community_id, channel_id, connection_id, sub_id)
  SELECT $3, p, s.connection_id, s.sub_id FROM s, unnest($7::text[]) AS p
  ON CONFLICT DO NOTHING
)
SELECT CASE WHEN EXISTS (SELECT 1 FROM s) THEN 0
  WHEN NOT EXISTS (SELECT 1 FROM live) THEN 3
  WHEN $8::integer > 0 AND (SELECT n FROM others) >= $8 THEN 1 ELSE 2 END`

// SubscriptionsGetCutoff is the number of the last subscription stored
// (ws_subscriptions_seq; 0 before the first): asked after a commit, the
// cutoff of its delivery (AudienceRange).
func (st *Store) SubscriptionsGetCutoff(ctx context.Context) (int64, error) {
	var n int64
	err := st.pool.QueryRow(ctx, `SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM ws_subscriptions_seq`).Scan(&n)
	if err != nil {
		return 0, errorf("subscriptions cutoff: %w", err)
	}
	return n, nil
}

// SubscriptionsDelete removes subscription sub of connection and reports
// whether it was there.
func (st *Store) SubscriptionsDelete(ctx context.Context, connection, sub string) (bool, error) {
	tag, err := st.pool.Exec(ctx,
		`DELETE FROM ws_subscriptions WHERE connection_id = $1 AND sub_id = $2`, connection, sub)
	if err != nil {
		return false, errorf("end subscription: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// SubscriptionsListByKey returns the subscriptions of community among keys
// ([connection, sub] pairs) that still exist and whose connection is live
// at now; a closed one is absent.
func (st *Store) SubscriptionsListByKey(ctx context.Context, community string, keys [][2]string, now int64) ([]session.Subscription, error) {
	conns := make([]string, len(keys))
	subs := make([]string, len(keys))
	for i, k := range keys {
		conns[i], subs[i] = k[0], k[1]
	}
	rows, err := st.pool.Query(ctx, `
SELECT s.connection_id, s.sub_id, s.pubkey, s.filters
FROM unnest($1::text[], $2::text[]) AS k(connection_id, sub_id)
JOIN ws_subscriptions s ON s.connection_id = k.connection_id AND s.sub_id = k.sub_id
JOIN ws_connections c ON c.id = s.connection_id
WHERE c.expires_at > $3 AND s.community_id = $4`, conns, subs, now, community)
	if err != nil {
		return nil, errorf("load subscriptions by key: %w", err)
	}
	return scanSubscriptions(rows)
}

func scanSubscriptions(rows pgx.Rows) ([]session.Subscription, error) {
	out, err := collect(rows, func(row pgx.CollectableRow) (session.Subscription, error) {
		var s session.Subscription
		err := row.Scan(&s.Connection, &s.Sub, &s.Pubkey, &s.Filters)
		return s, err
	})
	if err != nil {
		return nil, errorf("read subscriptions: %w", err)
	}
	return out, nil
}

// AudienceListBounds splits the connections with a subscription of community
// indexed under the any-channel bucket or channels (live or not) into runs
// of per, in connection id order, and returns the last id of each run: the
// last one is the largest id. Run i is then AudienceRange(bounds[i-1],
// bounds[i]], the first one from "". Nil: no connection.
func (st *Store) AudienceListBounds(ctx context.Context, community string, channels []string, per int) ([]string, error) {
	rows, err := st.pool.Query(ctx, audienceBoundsSQL, community, channels, max(per, 1))
	if err != nil {
		return nil, errorf("audience bounds: %w", err)
	}
	bounds, err := collect(rows, pgx.RowTo[string])
	if err != nil {
		return nil, errorf("audience bounds: %w", err)
	}
	if len(bounds) == 0 {
		return nil, nil
	}
	return bounds, nil
}

// AudienceListRange returns the live subscriptions of community indexed under
// the any-channel bucket or channels, whose connection id is after after
// and at most through, and whose number is at most cutoff
// (Deliveries.Cutoff: they were stored before the commit being delivered).
// Ranges split the audience by connection, so with AudienceBounds each
// subscription is in exactly one and a connection's subscriptions share it;
// each range reads only its own index entries.
func (st *Store) AudienceListRange(ctx context.Context, community string, channels []string, cutoff int64, after, through string, now int64) ([]session.Subscription, error) {
	rows, err := st.pool.Query(ctx, audienceRangeSQL, community, channels, cutoff, after, through, now)
	if err != nil {
		return nil, errorf("audience range (%q, %q]: %w", after, through, err)
	}
	return scanSubscriptions(rows)
}

// AudienceListPart returns part (0 ≤ part < parts) of the live subscriptions of
// community indexed under the any-channel bucket or channels whose number
// is at most cutoff, a hash share of the connections: the parts of an
// earlier version's split, which reads every index entry of the audience
// for each part (AudienceRange reads only its own).
func (st *Store) AudienceListPart(ctx context.Context, community string, channels []string, cutoff int64, part, parts int, now int64) ([]session.Subscription, error) {
	rows, err := st.pool.Query(ctx, audiencePartSQL, community, channels, cutoff, part, parts, now)
	if err != nil {
		return nil, errorf("audience part %d of %d: %w", part, parts, err)
	}
	return scanSubscriptions(rows)
}

// The reads of the fan-out function's split of an audience.
const (
	// audienceBoundsSQL: every $3-th distinct connection id of the
	// audience, and the last.
	audienceBoundsSQL = `
SELECT c FROM (
  SELECT c, row_number() OVER (ORDER BY c) AS n, count(*) OVER () AS total
  FROM (SELECT DISTINCT k.connection_id AS c FROM ws_subscription_channels k
    WHERE k.community_id = $1 AND k.channel_id = ANY(ARRAY[''] || $2::text[])) d
) x
WHERE n % $3::integer = 0 OR n = total
ORDER BY c`
)

// audienceRangeSQL is AudienceRange's read: the connections in ($4, $5],
// a range of the index's key, subscriptions numbered up to the cutoff ($3).
// Each channel's entries are a lookup of their own (a LATERAL subquery that
// OFFSET 0 keeps from being flattened), not one "= ANY" scan: a generic
// plan made on small tables otherwise skips channel_id in the key and walks
// the community's every entry in the range (TestDeliveryPlansUseKeys).
var audienceRangeSQL = liveSubscriptionsOf("",
	`SELECT k.connection_id, k.sub_id FROM unnest(ARRAY[''] || $2::text[]) AS ch(id)
  CROSS JOIN LATERAL (SELECT k.connection_id, k.sub_id FROM ws_subscription_channels k
    WHERE k.community_id = $1 AND k.channel_id = ch.id
      AND k.connection_id > $4::text AND k.connection_id <= $5::text OFFSET 0) k`, "$6", " AND s.seq <= $3")

// audiencePartSQL is AudienceListPart's read: one hash share of the
// connections, subscriptions numbered up to the cutoff ($3).
var audiencePartSQL = liveSubscriptionsSQL("",
	`k.channel_id = ANY(ARRAY[''] || $2::text[])
    AND (hashtext(k.connection_id) & 2147483647) % $5::integer = $4::integer`, "$6", " AND s.seq <= $3")

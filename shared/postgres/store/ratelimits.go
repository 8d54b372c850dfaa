package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// ConnectionRateKey is the rate counter of a WebSocket connection's
// messages.
func ConnectionRateKey(connection string) string { return "conn:" + connection }

// RateCountersAdd adds each hit's cost to its counter of community in one
// statement and returns the new totals by key, unless pubkey owns a channel
// there (exempt: no row is touched, no total returned) and the counter is
// the key's: a connection's message counter (ConnectionRateKey) counts
// every key, as the session store counts it (one rule whichever store
// keeps the sessions). When pruneBefore is
// not 0 it also deletes the windows that started before it.
func (s *Store) RateCountersAdd(ctx context.Context, community, pubkey string, hits []records.RateHit, pruneBefore int64) (map[string]int64, error) {
	keys := make([]string, len(hits))
	starts := make([]int64, len(hits))
	costs := make([]int64, len(hits))
	for i, h := range hits {
		keys[i], starts[i], costs[i] = h.Key, h.WindowStart, h.Cost
	}
	rows, err := s.pool.Query(ctx, hitSQL, community, pubkey, keys, starts, costs, pruneBefore != 0, pruneBefore)
	if err != nil {
		return nil, errorf("count rate: %w", err)
	}
	totals := map[string]int64{}
	var key string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&key, &n}, func() error {
		totals[key] = n
		return nil
	}); err != nil {
		return nil, errorf("count rate: %w", err)
	}
	return totals, nil
}

// hitSQL adds each counter's cost in one statement, unless the key owns a
// channel (exempt: no row of its key counters is touched; a connection's
// counter, conn:, is always counted), and returns the new totals.
const hitSQL = `
WITH exempt AS (
  SELECT $2::text <> '' AND EXISTS (SELECT 1 FROM channel_members m
    WHERE m.community_id = $1 AND m.pubkey = $2 AND m.role = 'owner' AND m.` + activeMember + `) AS yes
), prune AS (
  DELETE FROM rate_counters WHERE $6::boolean AND window_start < $7
)
INSERT INTO rate_counters AS r (community_id, key, window_start, hits)
SELECT $1, k.key, k.ws, k.cost FROM unnest($3::text[], $4::bigint[], $5::bigint[]) AS k(key, ws, cost), exempt
WHERE NOT exempt.yes OR k.key LIKE 'conn:%'
ON CONFLICT (community_id, key, window_start) DO UPDATE SET hits = r.hits + EXCLUDED.hits
RETURNING key, hits`

package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Statements of nip98_seen, the replay guard of NIP-98 tokens.

// NIP98SeenInsert records a NIP-98 auth event id for community; fresh is
// false when it was recorded before (a replay). Expired rows are pruned
// now and then.
//
// The row commits durably (the server's default synchronous commit) before
// the request is served, so a replay is refused after a crash or a restart
// as before it, and the rule trusts nothing about the server's start: a
// token signed just before a restart (an Aurora resume, a failover) is
// accepted after it, within its window. (An earlier rule committed without
// the WAL flush and refused every token older than pg_postmaster_start_time,
// which refused such tokens with 401.)
func (s *Store) NIP98SeenInsert(ctx context.Context, community, id string, expiresAt int64) (fresh bool, err error) {
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO nip98_seen (community_id, event_id, expires_at) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING`, community, id, expiresAt)
	if len(id) >= 2 && id[len(id)-2:] == "00" { // about one call in 256 prunes
		b.Queue(`DELETE FROM nip98_seen WHERE expires_at < $1`, time.Now().Unix())
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var inserted int64
	for i := 0; i < b.Len(); i++ {
		tag, err := br.Exec()
		if err != nil {
			return false, errorf("record nip98 token: %w", err)
		}
		if i == 0 {
			inserted = tag.RowsAffected()
		}
	}
	return inserted == 1, nil
}

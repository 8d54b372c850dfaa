package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Statements of nip98_seen, the replay guard of NIP-98 tokens.

// NIP98SeenInsert records a NIP-98 auth event id for community; fresh is false
// when it was recorded before (a replay) or when the token is older than the
// database server's last start. Expired rows are pruned now and then.
//
// Every bridge request makes this write, reads included, so a token dated
// at or before the database's current second commits without waiting for
// the WAL flush (synchronous_commit off for this transaction): a crash can
// forget such a row, but the token then predates the restart and the
// insert's WHERE refuses it. A token dated later (a client clock ahead of
// the database) could still be inside its window after a restart, so its
// row is flushed before the answer. Either way a replay after a crash is
// refused; right after a restart, clients whose token is older than the
// restart sign a new one.
func (s *Store) NIP98SeenInsert(ctx context.Context, community, id string, createdAt, expiresAt int64) (fresh bool, err error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(`SELECT set_config('synchronous_commit',
  CASE WHEN $1::bigint <= floor(extract(epoch FROM now()))::bigint THEN 'off' ELSE 'on' END, true)`, createdAt)
	b.Queue(`INSERT INTO nip98_seen (community_id, event_id, expires_at)
SELECT $1, $2, $3 WHERE $4::bigint > floor(extract(epoch FROM pg_postmaster_start_time()))::bigint
ON CONFLICT DO NOTHING`,
		community, id, expiresAt, createdAt)
	if len(id) >= 2 && id[len(id)-2:] == "00" { // about one call in 256 prunes
		b.Queue(`DELETE FROM nip98_seen WHERE expires_at < $1`, time.Now().Unix())
	}
	b.Queue("COMMIT")
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var inserted int64
	for i := 0; i < b.Len(); i++ {
		tag, err := br.Exec()
		if err != nil {
			return false, errorf("record nip98 token: %w", err)
		}
		if i == 2 {
			inserted = tag.RowsAffected()
		}
	}
	return inserted == 1, nil
}

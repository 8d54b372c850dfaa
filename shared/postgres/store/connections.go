package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// openConnectionSQL records a connection ($1 id, $2 community, $3 relay
// URLs, $4 challenge, $5 connected, $6 expires, $7 key or "", $8 challenge
// sent), replacing a row with the same id (and its challenge state and key).
const openConnectionSQL = `
INSERT INTO ws_connections (id, community_id, relay_urls, challenge, connected_at, expires_at, pubkey, challenge_sent)
VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7::text, ''), $8)
ON CONFLICT (id) DO UPDATE SET community_id = EXCLUDED.community_id, relay_urls = EXCLUDED.relay_urls,
  challenge = EXCLUDED.challenge, challenge_sent = EXCLUDED.challenge_sent, pubkey = EXCLUDED.pubkey,
  connected_at = EXCLUDED.connected_at, expires_at = EXCLUDED.expires_at`

func openConnectionArgs(c session.Connection) []any {
	return []any{c.ID, c.Community, nonNil(c.RelayURLs), c.Challenge, c.ConnectedAt, c.ExpiresAt, c.Pubkey, c.ChallengeSent}
}

// ConnectionsInsert records c, replacing a row with the same id (and its
// challenge state and key, which become c's); when pruneBefore is not 0 it
// also deletes the connections that expired before it.
func (s *Store) ConnectionsInsert(ctx context.Context, c session.Connection, pruneBefore int64) error {
	_, err := s.pool.Exec(ctx, openConnectionSQL, openConnectionArgs(c)...)
	if err != nil {
		return errorf("record connection %s: %w", c.ID, err)
	}
	if pruneBefore != 0 {
		if _, err := s.pool.Exec(ctx, `DELETE FROM ws_connections WHERE expires_at < $1`, pruneBefore); err != nil {
			return errorf("prune expired connections: %w", err)
		}
	}
	return nil
}

// ConnectionsGet returns connection id if it is still live at now (unix
// seconds), or ErrUnknownConnection.
func (s *Store) ConnectionsGet(ctx context.Context, id string, now int64) (*session.Connection, error) {
	c := &session.Connection{ID: id}
	var pk *string
	err := s.pool.QueryRow(ctx, `
SELECT community_id, relay_urls, challenge, challenge_sent, pubkey, connected_at, expires_at
FROM ws_connections WHERE id = $1 AND expires_at > $2`, id, now).
		Scan(&c.Community, &c.RelayURLs, &c.Challenge, &c.ChallengeSent, &pk, &c.ConnectedAt, &c.ExpiresAt)
	if notFound(err) {
		return nil, session.ErrUnknownConnection
	}
	if err != nil {
		return nil, errorf("load connection %s: %w", id, err)
	}
	if pk != nil {
		c.Pubkey = *pk
	}
	return c, nil
}

// ConnectionsSetChallengeSent records that the AUTH challenge of connection id went
// out; first is false when another invocation already recorded it.
func (s *Store) ConnectionsSetChallengeSent(ctx context.Context, id string) (first bool, err error) {
	tag, err := s.pool.Exec(ctx,
		`UPDATE ws_connections SET challenge_sent = true WHERE id = $1 AND NOT challenge_sent`, id)
	if err != nil {
		return false, errorf("mark challenge sent: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ConnectionsSetAuthed records pubkey as connection id's authenticated
// key; ErrUnknownConnection when there is no such row.
func (s *Store) ConnectionsSetAuthed(ctx context.Context, id, pubkey string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE ws_connections SET pubkey = $2 WHERE id = $1`, id, pubkey)
	if err != nil {
		return errorf("authenticate connection: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return session.ErrUnknownConnection
	}
	return nil
}

// ConnectionsDelete deletes connection id and (by cascade) its subscriptions.
func (s *Store) ConnectionsDelete(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM ws_connections WHERE id = $1`, id); err != nil {
		return errorf("delete connection %s: %w", id, err)
	}
	return nil
}

// ConnectionsListLive lists the ids of the connections live at now (the
// liveness tick's open connections, sessions.PG).
func (s *Store) ConnectionsListLive(ctx context.Context, now int64) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM ws_connections WHERE expires_at > $1 ORDER BY id`, now)
	if err != nil {
		return nil, errorf("live connections: %w", err)
	}
	ids, err := collect(rows, pgx.RowTo[string])
	if err != nil {
		return nil, errorf("live connections: %w", err)
	}
	return ids, nil
}

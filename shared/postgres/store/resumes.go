package store

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// resumesPutSQL stores a resume record (ws_resumes,
// migrations/020_ws_resumes.sql), replacing the one of the same key, and
// deletes the key's expired records in the community.
const resumesPutSQL = `
WITH gone AS (
  DELETE FROM ws_resumes WHERE community_id = $1 AND pubkey = $2 AND expires_at <= $8
    AND (sub, shape) <> ($3, $4)
)
INSERT INTO ws_resumes (community_id, pubkey, sub, shape, since, lim, wrote, answered_at, expires_at, newest)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (community_id, pubkey, sub, shape) DO UPDATE SET since = EXCLUDED.since, lim = EXCLUDED.lim,
  wrote = EXCLUDED.wrote, answered_at = EXCLUDED.answered_at, expires_at = EXCLUDED.expires_at, newest = EXCLUDED.newest`

// ResumesPut stores r (session.Store.SaveResume), one statement.
func (s *Store) ResumesPut(ctx context.Context, r session.Resume) error {
	if _, err := s.pool.Exec(ctx, resumesPutSQL, r.Community, r.Pubkey, r.Sub, r.Shape, nonNilInts(r.Since), nonNilInts(r.Limit),
		r.Wrote, r.At, r.ExpiresAt, r.Newest); err != nil {
		return errorf("save resume of %s: %w", r.Sub, err)
	}
	return nil
}

// ResumesGet reads the record of community, pubkey, sub and shape live at
// now, or nil.
func (s *Store) ResumesGet(ctx context.Context, community, pubkey, sub, shape string, now int64) (*session.Resume, error) {
	r := session.Resume{Community: community, Pubkey: pubkey, Sub: sub, Shape: shape}
	err := s.pool.QueryRow(ctx, `SELECT since, lim, wrote, answered_at, expires_at, newest FROM ws_resumes
WHERE community_id = $1 AND pubkey = $2 AND sub = $3 AND shape = $4 AND expires_at > $5`,
		community, pubkey, sub, shape, now).Scan(&r.Since, &r.Limit, &r.Wrote, &r.At, &r.ExpiresAt, &r.Newest)
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errorf("read resume of %s: %w", sub, err)
	}
	return &r, nil
}

func nonNilInts(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

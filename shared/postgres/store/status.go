package store

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// Status reads community's Status in one statement; each part reads an
// index (its newest event through events_time).
func (s *Store) Status(ctx context.Context, community string) (records.Status, error) {
	var st records.Status
	err := s.pool.QueryRow(ctx, `SELECT
  coalesce((SELECT e.created_at FROM events e WHERE e.community_id = $1 ORDER BY e.created_at DESC LIMIT 1), 0),
  (SELECT count(*) FROM ws_connections WHERE community_id = $1 AND expires_at > extract(epoch FROM now())),
  coalesce((SELECT bytes FROM media_stored WHERE community_id = $1), 0)::bigint,
  (SELECT count(*) FROM moderation_reports WHERE community_id = $1 AND status = 'open')`, community).Scan(
		&st.LastWrite, &st.Connections, &st.MediaBytes, &st.OpenReports)
	if err != nil {
		return records.Status{}, errorf("status: %w", err)
	}
	return st, nil
}

package store

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// Status reads the deployment's Status in one statement; each part reads
// an index (the newest event per community through events_time).
func (s *Store) Status(ctx context.Context) (records.Status, error) {
	var st records.Status
	err := s.pool.QueryRow(ctx, `SELECT
  coalesce((SELECT max(l.created_at) FROM communities c,
    LATERAL (SELECT e.created_at FROM events e WHERE e.community_id = c.id ORDER BY e.created_at DESC LIMIT 1) l), 0),
  (SELECT count(*) FROM ws_connections WHERE expires_at > extract(epoch FROM now())),
  coalesce((SELECT sum(bytes) FROM media_stored), 0)::bigint,
  (SELECT count(*) FROM moderation_reports WHERE status = 'open'),
  (SELECT count(*) FROM communities WHERE disabled_at IS NULL)`).Scan(
		&st.LastWrite, &st.Connections, &st.MediaBytes, &st.OpenReports, &st.Communities)
	if err != nil {
		return records.Status{}, errorf("status: %w", err)
	}
	return st, nil
}

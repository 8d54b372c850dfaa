package store

import "context"

// Status is what an operator asks of the deployment's database first
// (GET /healthz?deep=1): the newest event's created_at over every
// community (0: none), the WebSocket connections the database holds, the
// media bytes stored, and the NIP-56 reports still open.
type Status struct {
	LastWrite   int64 `json:"last_write"`
	Connections int64 `json:"open_connections"`
	MediaBytes  int64 `json:"media_bytes"`
	OpenReports int64 `json:"open_reports"`
	Communities int64 `json:"communities"`
}

// Status reads the deployment's Status in one statement; each part reads
// an index (the newest event per community through events_time).
func (s *Store) Status(ctx context.Context) (Status, error) {
	var st Status
	err := s.pool.QueryRow(ctx, `SELECT
  coalesce((SELECT max(l.created_at) FROM communities c,
    LATERAL (SELECT e.created_at FROM events e WHERE e.community_id = c.id ORDER BY e.created_at DESC LIMIT 1) l), 0),
  (SELECT count(*) FROM ws_connections WHERE expires_at > extract(epoch FROM now())),
  coalesce((SELECT sum(bytes) FROM media_stored), 0)::bigint,
  (SELECT count(*) FROM moderation_reports WHERE status = 'open'),
  (SELECT count(*) FROM communities WHERE disabled_at IS NULL)`).Scan(
		&st.LastWrite, &st.Connections, &st.MediaBytes, &st.OpenReports, &st.Communities)
	if err != nil {
		return Status{}, errorf("status: %w", err)
	}
	return st, nil
}

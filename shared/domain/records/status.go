package records

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

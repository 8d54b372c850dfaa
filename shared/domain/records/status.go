package records

// Status is what an operator asks of their community first (GET
// /healthz?deep=1, NIP-98 signed by one of its operators): the
// community's newest event's created_at (0: none), its open WebSocket
// connections, the media bytes it stores, and its NIP-56 reports still
// open. Nothing of another community, nor how many the deployment serves.
type Status struct {
	LastWrite   int64 `json:"last_write"`
	Connections int64 `json:"open_connections"`
	MediaBytes  int64 `json:"media_bytes"`
	OpenReports int64 `json:"open_reports"`
}

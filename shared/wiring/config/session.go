package config

// SessionConfig is where the WebSocket sessions live
// (shared/service/session.Store).
type SessionConfig struct {
	// Table is SESSION_TABLE, the DynamoDB table of the sessions (the
	// stack's; make dev's local dynalite, localdev/ddb.sh, whose endpoint
	// the SDK reads from AWS_ENDPOINT_URL_DYNAMODB). Every function that
	// keeps or reads sessions needs it.
	Table string
}

// On reports whether the sessions live in DynamoDB.
func (s SessionConfig) On() bool { return s.Table != "" }

func loadSession(getenv func(string) string) SessionConfig {
	return SessionConfig{Table: getenv("SESSION_TABLE")}
}

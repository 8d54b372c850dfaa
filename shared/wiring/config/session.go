package config

import "strings"

// SessionConfig is SESSION_*: where the WebSocket sessions keep what lets
// an open app stay off the database (shared/service/sessions.Idle).
type SessionConfig struct {
	// Bucket is SESSION_BUCKET (the stack's media bucket; make dev's
	// local S3 server); empty: connections, subscriptions and every REQ
	// use the database.
	Bucket string
	// Prefix is SESSION_PREFIX (default "sessions/"), the key prefix the
	// state lives under.
	Prefix string
	// Endpoint is AWS_ENDPOINT_URL_S3, as for media.
	Endpoint string
}

// On reports whether the sessions keep their idle state in a bucket.
func (s SessionConfig) On() bool { return s.Bucket != "" }

func loadSession(getenv func(string) string) SessionConfig {
	s := SessionConfig{Bucket: getenv("SESSION_BUCKET"), Prefix: getenv("SESSION_PREFIX"), Endpoint: getenv("AWS_ENDPOINT_URL_S3")}
	if s.Prefix == "" {
		s.Prefix = DefaultSessionPrefix
	}
	if !strings.HasSuffix(s.Prefix, "/") {
		s.Prefix += "/"
	}
	return s
}

// DefaultSessionPrefix is SESSION_PREFIX's default; infra grants the
// functions this prefix of the bucket.
const DefaultSessionPrefix = "sessions/"

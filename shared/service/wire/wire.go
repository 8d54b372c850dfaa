// Package wire is the wire half of the WebSocket sessions: what the relay
// posts to a connection and how. It owns the Sender every post goes
// through (shared/transport/apigw provides it) and the errors it reports,
// the relay-to-client frames posted outside a message's own answer
// (frames.go), posting within a bound and hanging up a recipient that
// exceeds it, pacing a connection's answers (post.go), the NIP-42
// challenge derived from a connection's id (challenge.go), and the push
// function's greeting at $connect and liveness tick (push.go). It keeps
// no state of its own beyond one instance's pacing: the connections it
// greets and ticks are the session registry's (shared/service/sessions).
package wire

import (
	"context"
	"errors"
)

// Sender posts one WebSocket message to one connection (PostToConnection).
// It returns an error wrapping ErrGone when the connection no longer exists
// (HTTP 410) and one wrapping ErrTooLarge when the message is over the limit.
type Sender interface {
	Post(ctx context.Context, connectionID string, data []byte) error
}

// Errors a Sender reports.
var (
	ErrGone     = errors.New("connection is gone")
	ErrTooLarge = errors.New("message is larger than the WebSocket limit")
)

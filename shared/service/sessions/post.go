package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// # Posting without being held by a recipient
//
// A post to @connections returns once API Gateway accepted the message; it
// never waits for the client to read it. So a post's time is API Gateway's
// (tens of milliseconds), whoever the recipient, and the way to answer
// fast is to keep several posts in flight (PostsInFlight), never to wait
// for one recipient. A post that takes longer than PostTimeout is treated
// as its recipient's failure: Post reports it as ErrGone, and the caller
// drops the connection (Drop) as for a 410, so that one connection never
// costs the others more than that.

const (
	// PostsInFlight bounds the posts one answer or one delivery keeps in
	// flight at once: a REQ's stored events (wsrelay) and the connections
	// of a live delivery (fanout). With it a REQ answered with n events
	// takes about ceil(n/PostsInFlight)+1 post latencies to its EOSE.
	PostsInFlight = 64
	// PostTimeout bounds one post by default; past it the recipient is
	// dropped. API Gateway accepts a post in tens of milliseconds; 10 s is
	// far past any healthy post, even in the emulator on a loaded machine.
	PostTimeout = 10 * time.Second
)

// ErrTimeout marks a post that ran out of its time; it wraps ErrGone, so
// the recipient is dropped like a gone one.
var ErrTimeout = fmt.Errorf("post timed out: %w", ErrGone)

// Post posts data to connection id through s within timeout (PostTimeout
// when 0): a post that runs out of that time (not of ctx's) is
// ErrTimeout, which wraps ErrGone.
func Post(ctx context.Context, s Sender, id string, data []byte, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = PostTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := s.Post(pctx, id, data)
	if err != nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) && !errors.Is(err, ErrGone) {
		return fmt.Errorf("sessions: post to %s: %w (%v)", id, ErrTimeout, err)
	}
	return err
}

// Disconnecter closes a connection from the server side (DeleteConnection
// of @connections); a Sender may offer it.
type Disconnecter interface {
	Disconnect(ctx context.Context, connectionID string) error
}

// Drop forgets connection id, whose post failed with cause (ErrGone or
// ErrTimeout), and its subscriptions: no later delivery posts to it; the
// socket is hung up first when it may still be open (Hangup).
func (r *Registry) Drop(ctx context.Context, s Sender, id string, cause error) error {
	return errors.Join(Hangup(ctx, s, id, cause), r.Close(ctx, id))
}

// Hangup closes connection id's socket when its post only timed out
// (cause ErrTimeout) and s can (Disconnecter): the socket may still be
// open, and the client must learn to reconnect rather than miss events
// silently. A gone socket needs nothing.
func Hangup(ctx context.Context, s Sender, id string, cause error) error {
	d, ok := s.(Disconnecter)
	if !ok || !errors.Is(cause, ErrTimeout) {
		return nil
	}
	if err := d.Disconnect(ctx, id); err != nil && !errors.Is(err, ErrGone) {
		return fmt.Errorf("sessions: disconnect %s: %w", id, err)
	}
	return nil
}

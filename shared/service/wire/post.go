package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
// drops the connection (sessions.Registry.Drop) as for a 410, so that one connection never
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
		return fmt.Errorf("wire: post to %s: %w (%v)", id, ErrTimeout, err)
	}
	return err
}

// Disconnecter closes a connection from the server side (DeleteConnection
// of @connections); a Sender may offer it.
type Disconnecter interface {
	Disconnect(ctx context.Context, connectionID string) error
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
		return fmt.Errorf("wire: disconnect %s: %w", id, err)
	}
	return nil
}

// # Pacing a connection's answers
//
// API Gateway holds the posts it accepted for a client until the client
// reads them, and a client that falls too far behind is dropped (the
// emulator models that with a bounded outbound buffer, 1,024 posts). The
// relay cannot see how far behind a client is: a post returns once
// accepted. So the posts of the answers to one connection are paced
// (Pacer): PostBurst at once, then PostRate a second, shared by every
// answer this instance posts to that connection. A client that reads at
// least PostRate messages a second (a JavaScript client checking each
// event's signature reads one to a few thousand a second) has at most
// about PostBurst waiting, however many REQs it sends at once; one that
// does not read is dropped as before. No post waits more than
// PaceMaxWait: past that debt a post goes at once, uncounted (a
// connection that asks for more than pacing can spread, e.g. hundreds
// of REQs at once, meets API Gateway's buffer as it would unpaced), so
// pacing never holds an invocation, or the answers queued behind it on
// a busy instance, for long. Pacing is per instance: behind AWS
// the concurrent REQs of one connection may run on several instances,
// each pacing its own (docs/architecture.md).
const (
	// PostRate is the posts a second one connection's answers get after
	// PostBurst.
	PostRate = 1000
	// PostBurst is the posts one connection's answers may make at once:
	// half the emulator's outbound buffer, room for live deliveries and
	// another instance's answer beside.
	PostBurst = 512
	// PaceMaxWait bounds how long one post waits for its turn.
	PaceMaxWait = 10 * time.Second
)

// Pacer paces the posts to each connection: a token bucket per
// connection (rate a second, burst at once). Safe for concurrent use;
// the zero value is not usable (NewPacer).
type Pacer struct {
	rate, burst float64
	now         func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewPacer paces at rate posts a second after burst at once.
func NewPacer(rate, burst int) *Pacer {
	return &Pacer{rate: float64(rate), burst: float64(burst), now: time.Now, buckets: map[string]*bucket{}}
}

// pacerKeep bounds the buckets kept; past it the full ones are dropped.
const pacerKeep = 4096

// Wait returns once connection may be posted one more message, or with
// ctx's error.
func (p *Pacer) Wait(ctx context.Context, connection string) error {
	if p == nil {
		return nil
	}
	d := p.reserve(connection)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wire: pace %s: %w", connection, ctx.Err())
	}
}

// reserve takes one token of connection's bucket, going into debt when
// there is none, and returns how long until that token is there; past
// PaceMaxWait of debt it takes none and returns 0 (the post goes now).
func (p *Pacer) reserve(connection string) time.Duration {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.buckets[connection]
	if b == nil {
		if len(p.buckets) >= pacerKeep {
			p.prune(now)
		}
		b = &bucket{tokens: p.burst, at: now}
		p.buckets[connection] = b
	}
	b.tokens = min(p.burst, b.tokens+now.Sub(b.at).Seconds()*p.rate)
	b.at = now
	if b.tokens-1 >= 0 {
		b.tokens--
		return 0
	}
	d := time.Duration((1 - b.tokens) / p.rate * float64(time.Second))
	if d > PaceMaxWait {
		return 0
	}
	b.tokens--
	return d
}

// prune drops the buckets that are full again. Callers hold mu.
func (p *Pacer) prune(now time.Time) {
	for id, b := range p.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*p.rate >= p.burst {
			delete(p.buckets, id)
		}
	}
}

package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// # Frames the relay sends first
//
// Behind API Gateway the relay only ever answers: every invocation is a
// client's message, and a post to a connection during its $connect is
// refused (410 Gone) because the socket opens only once $connect returned.
// Two frames must nevertheless come from the relay unasked:
//
//   - the NIP-42 challenge as the connection opens: the Buzz desktop app
//     sends nothing before it and gives up after 25 s. $connect hands the
//     connection to an asynchronous invocation of the push function
//     (PushEvent.Greet), whose Greet retries the post while API Gateway
//     still answers 410, GreetWindow at most;
//   - a frame on every open connection at least every 50 s while idle
//     (Liveness), or the app's stall watchdog (60 s) resets the connection:
//     a schedule invokes the push function (any other PushEvent), whose
//     Tick posts Liveness to every connection the greeting recorded.
//
// Neither runs a database statement: the challenge is derived from the
// connection id (Challenges) and the open connections are the session
// store's (sessions.Registry.OpenConnections).

// PushEvent is the push function's event: a greeting of the connection
// Greet from $connect, or (Greet empty: a scheduled event, a queue's
// batch, {}) a liveness tick.
type PushEvent struct {
	Greet string `json:"greet,omitempty"`
}

// GreetEvent is the payload $connect hands to the push function for
// connection id.
func GreetEvent(id string) []byte {
	b, _ := json.Marshal(PushEvent{Greet: id})
	return b
}

// GreetWindow is how long Greet keeps posting a challenge that API Gateway
// refuses with 410 Gone: the connection opens once $connect returned and
// the upgrade completed, which takes milliseconds; a connection still gone
// after this closed before it opened.
const GreetWindow = 5 * time.Second

// greetBackoff is the first pause between two posts of a greeting; each
// next one doubles, up to greetBackoffMax.
const (
	greetBackoff    = 20 * time.Millisecond
	greetBackoffMax = 500 * time.Millisecond
)

// LivenessPost bounds one liveness post: a connection that does not take
// it within this is left for the next tick (it is not dropped: the frame
// carries nothing the client would miss).
const LivenessPost = 5 * time.Second

// OpenConnections is the registry of open connections the greeting
// records and the liveness tick reads (sessions.Registry, in the session
// store).
type OpenConnections interface {
	Opened(ctx context.Context, id string) error
	OpenConnections(ctx context.Context) ([]string, error)
	// Gone forgets a connection a post found gone.
	Gone(ctx context.Context, id string) error
}

// Pusher is the push function: the greeting and the liveness tick.
type Pusher struct {
	Sender     Sender
	Challenges Challenges
	// Open is the registry of open connections; nil (no SESSION_TABLE):
	// the greeting records nothing and a tick sends nothing.
	Open OpenConnections
	Log  *slog.Logger
	// Window overrides GreetWindow when above 0.
	Window time.Duration
}

// Handle serves one event of the push function (PushEvent).
func (p *Pusher) Handle(ctx context.Context, payload json.RawMessage) error {
	var ev PushEvent
	// Anything that is not a greeting is a tick: EventBridge's scheduled
	// event, an SQS batch, {}.
	_ = json.Unmarshal(payload, &ev)
	if ev.Greet != "" {
		return p.Greet(ctx, ev.Greet)
	}
	_, err := p.Tick(ctx)
	return err
}

func (p *Pusher) log() *slog.Logger {
	if p.Log == nil {
		return slog.Default()
	}
	return p.Log
}

// Greet posts connection id's challenge as soon as API Gateway takes it:
// a 410 Gone is retried with a growing pause for the greeting window, any
// other failure ends the greeting (the connection's first message is
// answered with the same challenge). Once posted, the connection is
// recorded among the open ones. It fails only when that record fails, so
// that Lambda retries the invocation.
func (p *Pusher) Greet(ctx context.Context, id string) error {
	window := p.Window
	if window <= 0 {
		window = GreetWindow
	}
	msg := AuthMessage(p.Challenges.For(id))
	deadline := time.Now().Add(window)
	pause := greetBackoff
	for attempt := 1; ; attempt++ {
		err := Post(ctx, p.Sender, id, msg, 0)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrGone) || errors.Is(err, ErrTimeout) {
			p.log().WarnContext(ctx, "wire: greeting not posted", "connection", id, "attempt", attempt, "err", err)
			return nil
		}
		if time.Now().Add(pause).After(deadline) {
			p.log().InfoContext(ctx, "wire: connection closed before its greeting", "connection", id, "attempts", attempt)
			return nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		pause = min(pause*2, greetBackoffMax)
	}
	if p.Open == nil {
		return nil
	}
	if err := p.Open.Opened(ctx, id); err != nil {
		return fmt.Errorf("wire: greet %s: %w", id, err)
	}
	return nil
}

// Tick posts Liveness to every open connection, PostsInFlight at a time,
// each within LivenessPost; a connection found gone is removed from the
// registry. It reports how many connections took the frame.
func (p *Pusher) Tick(ctx context.Context) (reached int, err error) {
	if p.Open == nil {
		return 0, nil
	}
	ids, err := p.Open.OpenConnections(ctx)
	if err != nil {
		return 0, err
	}
	var mu sync.Mutex
	sem := make(chan struct{}, PostsInFlight)
	var wg sync.WaitGroup
	for _, id := range ids {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := Post(ctx, p.Sender, id, Liveness, LivenessPost)
			switch {
			case err == nil:
				mu.Lock()
				reached++
				mu.Unlock()
			case errors.Is(err, ErrGone) && !errors.Is(err, ErrTimeout):
				if err := p.Open.Gone(ctx, id); err != nil {
					p.log().WarnContext(ctx, "wire: forget gone connection", "connection", id, "err", err)
				}
			default:
				p.log().WarnContext(ctx, "wire: liveness post", "connection", id, "err", err)
			}
		}()
	}
	wg.Wait()
	p.log().DebugContext(ctx, "wire: liveness tick", "open", len(ids), "reached", reached)
	return reached, nil
}

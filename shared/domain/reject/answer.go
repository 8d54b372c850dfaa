package reject

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Class is what kind of failure an error is, as the client sees it.
type Class int

const (
	// Refused: the error is a rejection (*Error); the client is told why.
	Refused Class = iota
	// Unavailable: the database cannot be reached right now (Aurora
	// resuming from a pause); the same request will likely work soon.
	Unavailable
	// Canceled: the request's context was canceled (the caller went away).
	Canceled
	// Unexpected: anything else. The client gets Opaque; the error is
	// logged, never sent.
	Unexpected
)

// Resuming is the answer to a request that failed because the database is
// unreachable or resuming from a pause: the client should send it again in
// a few seconds.
const Resuming = "error: the database is resuming, retry in a few seconds"

// RetryAfterSeconds is the Retry-After an HTTP client gets with Resuming.
const RetryAfterSeconds = 5

// Opaque is the one answer to an unexpected failure: internals never leak.
const Opaque = "error: the relay could not complete the request, try again"

// Answer is how one error is said on the wire, over HTTP and WebSocket alike.
type Answer struct {
	Class Class
	// Status is the HTTP status.
	Status int
	// Text is the NIP-01 prefixed message: the HTTP error body, the OK
	// false / CLOSED reason.
	Text string
	// RetryAfter is the HTTP Retry-After in seconds; 0: none.
	RetryAfter int
}

// Waiter is an error that says how long the client should wait before
// trying again (ratelimit.Exceeded).
type Waiter interface {
	Wait() time.Duration
}

// Status is the HTTP status of a rejection with prefix p.
func (p Prefix) Status() int {
	switch p {
	case Restricted, Blocked:
		return http.StatusForbidden
	case AuthRequired:
		return http.StatusUnauthorized
	case Duplicate:
		return http.StatusConflict
	case RateLimited:
		return http.StatusTooManyRequests
	case Internal:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest // invalid:
}

// Map is the one mapping from an error to its wire answer: a rejection by
// its prefix (with the Retry-After a Waiter asks for), an unavailable
// database to 503 + Retry-After with Resuming, anything else (a canceled
// request included) to 503 with Opaque.
func Map(err error) Answer {
	if r, ok := As(err); ok {
		a := Answer{Class: Refused, Status: r.Prefix.Status(), Text: r.Error()}
		if r.Status != 0 {
			a.Status = r.Status
		}
		var w Waiter
		if errors.As(err, &w) && w.Wait() > 0 {
			a.RetryAfter = int((w.Wait() + time.Second - 1) / time.Second)
		}
		return a
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Answer{Class: Canceled, Status: http.StatusServiceUnavailable, Text: Opaque}
	case unavailable(err):
		return Answer{Class: Unavailable, Status: http.StatusServiceUnavailable, Text: Resuming, RetryAfter: RetryAfterSeconds}
	}
	return Answer{Class: Unexpected, Status: http.StatusServiceUnavailable, Text: Opaque}
}

// Report is Map, logging what the client is not told: an unavailable
// database or a canceled request at warn, an unexpected error at error
// (a rejection is the client's business and is not logged). op names what
// failed ("wsrelay: req").
func Report(ctx context.Context, log *slog.Logger, op string, err error) Answer {
	a := Map(err)
	switch a.Class {
	case Unavailable:
		log.WarnContext(ctx, op+": database unavailable", "err", err)
	case Canceled:
		log.WarnContext(ctx, op+": canceled", "err", err)
	case Unexpected:
		log.ErrorContext(ctx, op, "err", err)
	}
	return a
}

// ErrUnavailable marks an error that means the database cannot be reached
// right now: the store (the only package that reads a database error)
// wraps such errors so that errors.Is(err, ErrUnavailable) holds.
var ErrUnavailable = errors.New("database unavailable")

// unavailable reports whether err means the database cannot be reached
// right now and the same request will likely work in a few seconds: an
// error the store classified as such (ErrUnavailable: Aurora resuming from
// a pause, a server starting up or shutting down, a connection lost
// mid-way), or a network failure or timeout on the way to it. An
// authentication or configuration error is not unavailability: retrying
// will not help.
func unavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// TooLargef is an invalid: rejection answered over HTTP with 413: the
// request is well formed but its answer is too large to give whole.
func TooLargef(format string, args ...any) *Error {
	e := New(Invalid, format, args...)
	e.Status = http.StatusRequestEntityTooLarge
	return e
}

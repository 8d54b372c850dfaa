// Package reject carries NIP-01 machine-readable rejection reasons. Every
// refusal the relay sends (OK false, CLOSED, HTTP error bodies) is a *Error
// whose text starts with one of the standard prefixes.
package reject

import (
	"errors"
	"fmt"
)

// Prefix is a NIP-01 reason prefix, without the colon.
type Prefix string

const (
	Invalid      Prefix = "invalid"
	Restricted   Prefix = "restricted"
	AuthRequired Prefix = "auth-required"
	Duplicate    Prefix = "duplicate"
	Blocked      Prefix = "blocked"
	RateLimited  Prefix = "rate-limited"
	Internal     Prefix = "error"
)

// Error is a rejection with its prefix and a human-readable reason.
type Error struct {
	Prefix Prefix
	Reason string
}

func (e *Error) Error() string { return string(e.Prefix) + ": " + e.Reason }

// New builds a rejection; format follows fmt.Sprintf.
func New(p Prefix, format string, args ...any) *Error {
	return &Error{Prefix: p, Reason: fmt.Sprintf(format, args...)}
}

// Invalidf is New(Invalid, ...).
func Invalidf(format string, args ...any) *Error { return New(Invalid, format, args...) }

// Restrictedf is New(Restricted, ...).
func Restrictedf(format string, args ...any) *Error { return New(Restricted, format, args...) }

// Duplicatef is New(Duplicate, ...).
func Duplicatef(format string, args ...any) *Error { return New(Duplicate, format, args...) }

// As returns the rejection inside err, if there is one.
func As(err error) (*Error, bool) {
	var r *Error
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// Message renders err for the wire: a rejection as itself, anything else as
// an opaque "error:" so internals never leak.
func Message(err error) string {
	if r, ok := As(err); ok {
		return r.Error()
	}
	return "error: internal error, try again"
}

// Resuming is the answer to a request that failed because the database is
// unreachable or resuming from a pause (store.Unavailable): the client
// should send it again in a few seconds.
const Resuming = "error: the database is resuming, retry in a few seconds"

// RetryAfterSeconds is the Retry-After an HTTP client gets with Resuming.
const RetryAfterSeconds = 5

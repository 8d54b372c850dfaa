// Package reject carries NIP-01 machine-readable rejection reasons and turns
// any error into what the client is told (answer.go): every refusal the relay
// sends (OK false, CLOSED, NOTICE, HTTP error bodies) starts with one of the
// standard prefixes.
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
	// Status, when set, is the HTTP status instead of the prefix's (413 for
	// an answer too large to give whole, TooLargef).
	Status int
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

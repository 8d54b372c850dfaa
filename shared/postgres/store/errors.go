package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// What the store's errors mean, decided here once: callers test them with
// errors.Is / errors.As and never look at a database error themselves.
// ErrNotFound, ErrTaken (*TakenError), a retryable conflict
// (IsSerialization), and a database that cannot be reached right now:
// every error the store returns is built by errorf (or passed through
// classify at Tx and Read), so errors.Is(err, reject.ErrUnavailable) holds
// for those.

// SQLSTATE codes the store interprets.
const (
	codeUniqueViolation      = "23505"
	codeDuplicateObject      = "42710"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
)

// IsSerialization reports whether err is a retryable conflict.
func IsSerialization(err error) bool {
	code := sqlState(err)
	return code == codeSerializationFailure || code == codeDeadlockDetected
}

// errorf is errorf(""+format, args...), classified.
func errorf(format string, args ...any) error {
	return classify(fmt.Errorf("store: "+format, args...))
}

// classify marks err as reject.ErrUnavailable when it says the database
// cannot be reached right now (databaseUnavailable); any other error is
// returned as it is.
func classify(err error) error {
	if err == nil || errors.Is(err, reject.ErrUnavailable) || !databaseUnavailable(err) {
		return err
	}
	return &unavailableError{err: err}
}

// unavailableError is a database error that means "retry in a few
// seconds": its text and chain are the driver's, and errors.Is finds
// reject.ErrUnavailable in it too.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{e.err, reject.ErrUnavailable} }

// databaseUnavailable reports whether err means the database cannot be
// reached right now and the same request will likely work in a few seconds:
// a server that is starting up or shutting down (Aurora resuming from a
// pause), out of connection slots while it scales, a connection exception,
// a connection that could not be made or timed out, a statement the driver
// knows never reached the server. A server error of any other class (an
// authentication or configuration error included) is not: retrying will
// not help. Network failures that are not the driver's are reject's to
// classify.
func databaseUnavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch code := pe.Code; {
		case code == "57P03", // cannot_connect_now: "the database system is starting up"
			code == "57P01", code == "57P02", // admin / crash shutdown
			code == "57P05",               // idle_session_timeout closed the session
			code == "53300",               // too_many_connections (capacity still scaling)
			strings.HasPrefix(code, "08"): // connection exception
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.Timeout(err) {
		return true
	}
	var retry interface{ SafeToRetry() bool }
	return errors.As(err, &retry) && retry.SafeToRetry()
}

// sqlState is err's SQLSTATE, "" when err is not a server error.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// taken turns a unique violation into a *TakenError about what; any other
// error is returned as it is.
func taken(err error, what string) error {
	if sqlState(err) == codeUniqueViolation {
		return &records.TakenError{What: what}
	}
	return err
}

package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// What a database error means is decided here once, by interpret, and
// every error the store returns has passed through it (errorf builds them;
// Tx and Read interpret what their callbacks return): callers test them
// with errors.Is / errors.As and never look at a database error themselves.

// SQLSTATE codes the store interprets.
const (
	codeUniqueViolation      = "23505"
	codeDuplicateObject      = "42710"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
)

// interpret is what err means, decided once; the driver's error stays in
// the chain (its text is the error's), the meaning is added to it:
//   - no row (pgx.ErrNoRows): records.ErrNotFound;
//   - a unique violation: records.ErrTaken (taken names the key);
//   - a serialization failure or a deadlock: records.ErrConflict, which a
//     retry of the whole transaction may clear (IsSerialization);
//   - the database cannot be reached right now (databaseUnavailable):
//     reject.ErrUnavailable;
//   - anything else: as it is: a context's cancellation or deadline
//     (errors.Is finds context.Canceled / DeadlineExceeded), a rejection a
//     callback returned, any other failure of the statement.
//
// interpret of an interpreted error is the same error.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	for _, m := range []error{records.ErrNotFound, records.ErrTaken, records.ErrConflict, reject.ErrUnavailable} {
		if errors.Is(err, m) {
			return err
		}
	}
	var means error
	switch code := sqlState(err); {
	case errors.Is(err, pgx.ErrNoRows):
		means = records.ErrNotFound
	case code == codeUniqueViolation:
		means = records.ErrTaken
	case code == codeSerializationFailure, code == codeDeadlockDetected:
		means = records.ErrConflict
	case databaseUnavailable(err):
		means = reject.ErrUnavailable
	default:
		return err
	}
	return &meaning{err: err, means: means}
}

// meaning is a database error with what it means: its text and chain are
// the driver's, and errors.Is finds the meaning in it too.
type meaning struct{ err, means error }

func (e *meaning) Error() string   { return e.err.Error() }
func (e *meaning) Unwrap() []error { return []error{e.err, e.means} }

// collect is pgx.CollectRows with its error interpreted.
func collect[T any](rows pgx.Rows, fn pgx.RowToFunc[T]) ([]T, error) {
	out, err := pgx.CollectRows(rows, fn)
	return out, interpret(err)
}

// inTx runs fn in one transaction of the pool (pgx.BeginFunc: committed
// when fn returns nil, rolled back otherwise), its error interpreted.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return interpret(pgx.BeginFunc(ctx, s.pool, fn))
}

// notFound reports whether err means no row (records.ErrNotFound), for the
// statements whose missing row is an answer rather than an error.
func notFound(err error) bool { return errors.Is(interpret(err), records.ErrNotFound) }

// IsSerialization reports whether err is a retryable conflict
// (records.ErrConflict).
func IsSerialization(err error) bool {
	return errors.Is(interpret(err), records.ErrConflict)
}

// errorf is fmt.Errorf("store: "+format, args...), interpreted.
func errorf(format string, args ...any) error {
	return interpret(fmt.Errorf("store: "+format, args...))
}

// databaseUnavailable reports whether err means the database cannot be
// reached right now and the same request will likely work in a few seconds:
// a server that is starting up or shutting down (Aurora resuming from a
// pause), out of connection slots while it scales, a connection exception,
// a connection that could not be made or timed out, a statement the driver
// knows never reached the server. A server error of any other class (an
// authentication or configuration error included) is not: retrying will
// not help. Network failures that are not the driver's are reject's to
// interpret.
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
	if errors.Is(interpret(err), records.ErrTaken) {
		return &records.TakenError{What: what}
	}
	return err
}

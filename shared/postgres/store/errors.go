package store

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// What the store's errors mean, decided here once: callers test them with
// errors.Is / errors.As and never look at a database error themselves.

// ErrTaken is a unique key another row already holds; the error carrying it
// is a *TakenError saying which.
var ErrTaken = errors.New("already taken")

// TakenError names the key that is taken ("community id x", "hostname h").
type TakenError struct{ What string }

func (e *TakenError) Error() string { return e.What + " is already taken" }

// Is makes errors.Is(err, ErrTaken) true.
func (e *TakenError) Is(target error) bool { return target == ErrTaken }

// SQLSTATE codes the store interprets.
const (
	codeUniqueViolation = "23505"
	codeDuplicateObject = "42710"
)

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
		return &TakenError{What: what}
	}
	return err
}

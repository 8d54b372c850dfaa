package records

import (
	"errors"
)

// ErrNotFound is returned for a missing row.
var ErrNotFound = errors.New("not found")

// ErrTaken is a unique key another row already holds; the error carrying it
// is a *TakenError saying which.
var ErrTaken = errors.New("already taken")

// TakenError names the key that is taken ("community id x", "hostname h").
type TakenError struct{ What string }

func (e *TakenError) Error() string { return e.What + " is already taken" }

// Is makes errors.Is(err, ErrTaken) true.
func (e *TakenError) Is(target error) bool { return target == ErrTaken }

// ErrConflict is a write that conflicted with a concurrent one (a
// serialization failure or a deadlock): nothing of it was kept, and the
// whole transaction retried may succeed.
var ErrConflict = errors.New("conflicts with a concurrent write")

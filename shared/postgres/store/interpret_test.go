package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// TestInterpret: the store reads a database error once. Each one that
// means something carries that meaning (not found, taken, a retryable
// conflict, "retry in a few seconds") with its text and the driver's error
// unchanged; any other is returned as it is, and an interpreted error is
// not interpreted again.
func TestInterpret(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("acquire connection: %w", err) }
	meanings := []error{records.ErrNotFound, records.ErrTaken, records.ErrConflict, reject.ErrUnavailable}
	for _, c := range []struct {
		name  string
		err   error
		means error // nil: none
	}{
		{"nil", nil, nil},
		{"no rows", pgx.ErrNoRows, records.ErrNotFound},
		{"no rows, wrapped", fmt.Errorf("store: blob: %w", pgx.ErrNoRows), records.ErrNotFound},
		{"not found already", fmt.Errorf("store: community: %w", records.ErrNotFound), records.ErrNotFound},
		{"unique violation", &pgconn.PgError{Code: "23505"}, records.ErrTaken},
		{"unique violation, wrapped", wrap(&pgconn.PgError{Code: "23505"}), records.ErrTaken},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, records.ErrConflict},
		{"deadlock", wrap(&pgconn.PgError{Code: "40P01"}), records.ErrConflict},
		{"starting up", wrap(&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}), reject.ErrUnavailable},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, reject.ErrUnavailable},
		{"crash shutdown", &pgconn.PgError{Code: "57P02"}, reject.ErrUnavailable},
		{"idle session timeout", &pgconn.PgError{Code: "57P05"}, reject.ErrUnavailable},
		{"connection failure", &pgconn.PgError{Code: "08006"}, reject.ErrUnavailable},
		{"too many connections", &pgconn.PgError{Code: "53300"}, reject.ErrUnavailable},
		{"bad password", wrap(&pgconn.PgError{Code: "28P01"}), nil},
		{"check violation", &pgconn.PgError{Code: "23514"}, nil},
		{"plain", errors.New("boom"), nil},
		{"rejection", reject.Invalidf("nope"), nil},
		// Not the driver's: reject classifies these itself.
		{"network error", wrap(&net.OpError{Op: "read", Err: errors.New("reset")}), nil},
		{"eof", wrap(io.ErrUnexpectedEOF), nil},
		{"deadline", wrap(context.DeadlineExceeded), nil},
		{"cancelled", wrap(context.Canceled), nil},
	} {
		got := interpret(c.err)
		for _, m := range meanings {
			if is := errors.Is(got, m); is != (m == c.means) {
				t.Errorf("%s: errors.Is(interpret(err), %q) = %v, want %v", c.name, m, is, !is)
			}
		}
		if c.err == nil {
			if got != nil {
				t.Errorf("nil: interpret(nil) = %v", got)
			}
			continue
		}
		if got.Error() != c.err.Error() {
			t.Errorf("%s: interpret changed the text %q to %q", c.name, c.err, got)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: the original error is no longer in the chain", c.name)
		}
		if interpret(got) != got {
			t.Errorf("%s: interpreted twice", c.name)
		}
		if (c.means == records.ErrConflict) != IsSerialization(c.err) {
			t.Errorf("%s: IsSerialization = %v", c.name, !(c.means == records.ErrConflict))
		}
		if c.means == reject.ErrUnavailable && reject.Map(errorf("read: %w", c.err)).Class != reject.Unavailable {
			t.Errorf("%s: a store error is not answered as unavailable", c.name)
		}
	}
}

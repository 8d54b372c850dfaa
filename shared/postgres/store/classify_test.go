package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// The store reads a database error once: the ones that mean "retry in a
// few seconds" carry reject.ErrUnavailable, with their text unchanged;
// any other is returned as it is.
func TestClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("acquire connection: %w", err) }
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"starting up", wrap(&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"crash shutdown", &pgconn.PgError{Code: "57P02"}, true},
		{"idle session timeout", &pgconn.PgError{Code: "57P05"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, false},
		{"bad password", wrap(&pgconn.PgError{Code: "28P01"}), false},
		{"plain", errors.New("boom"), false},
		{"rejection", reject.Invalidf("nope"), false},
		// Not the driver's: reject classifies these itself.
		{"network error", wrap(&net.OpError{Op: "read", Err: errors.New("reset")}), false},
		{"eof", wrap(io.ErrUnexpectedEOF), false},
		{"deadline", wrap(context.DeadlineExceeded), false},
	} {
		got := classify(c.err)
		if is := errors.Is(got, reject.ErrUnavailable); is != c.want {
			t.Errorf("%s: errors.Is(classify(err), reject.ErrUnavailable) = %v, want %v", c.name, is, c.want)
		}
		if c.err != nil && got.Error() != c.err.Error() {
			t.Errorf("%s: classify changed the text %q to %q", c.name, c.err, got)
		}
		var pe *pgconn.PgError
		if errors.As(c.err, &pe) && !errors.As(got, &pe) {
			t.Errorf("%s: the driver's error is no longer in the chain", c.name)
		}
		if c.want && classify(got) != got {
			t.Errorf("%s: classified twice", c.name)
		}
		if c.want && reject.Map(errorf("read: %w", c.err)).Class != reject.Unavailable {
			t.Errorf("%s: a store error is not answered as unavailable", c.name)
		}
	}
}

package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/buzzrelay/relay/shared/reject"
	"github.com/buzzrelay/relay/shared/store"
)

func TestUnavailable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("store: acquire connection: %w", err) }
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"starting up", wrap(&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"idle session timeout", &pgconn.PgError{Code: "57P05"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"deadline", wrap(context.DeadlineExceeded), true},
		{"refused", wrap(&net.OpError{Op: "dial", Err: errors.New("connection refused")}), true},
		{"eof", wrap(io.ErrUnexpectedEOF), true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"bad password", wrap(&pgconn.PgError{Code: "28P01"}), false},
		{"rejection", reject.Invalidf("nope"), false},
		{"plain", errors.New("boom"), false},
	} {
		if got := store.Unavailable(c.err); got != c.want {
			t.Errorf("%s: Unavailable = %v, want %v", c.name, got, c.want)
		}
	}
	if m := store.Message(wrap(context.DeadlineExceeded)); m != reject.Resuming {
		t.Errorf("Message(timeout) = %q", m)
	}
	if m := store.Message(reject.Invalidf("x")); m != "invalid: x" {
		t.Errorf("Message(rejection) = %q", m)
	}
}

// A real connection attempt to a closed port and to a server that never
// answers are both classified as unavailable, the latter within
// ConnectTimeout.
func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	go func() { // accept and say nothing, as a resuming Aurora may
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	for _, addr := range []string{closed, hang.Addr().String()} {
		st, err := store.Open(context.Background(), "postgres://u@"+addr+"/db?sslmode=disable", store.Options{ConnectTimeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = st.Ping(context.Background())
		st.Close()
		if !store.Unavailable(err) {
			t.Errorf("%s: %v is not classified as unavailable", addr, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: ping took %s with a 300ms connect timeout", addr, d)
		}
	}
}

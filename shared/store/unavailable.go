package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/buzzrelay/relay/shared/reject"
)

// Message renders err for the wire as reject.Message does, except that an
// unavailable database answers reject.Resuming.
func Message(err error) string {
	if Unavailable(err) {
		return reject.Resuming
	}
	return reject.Message(err)
}

// Unavailable reports whether err means the database cannot be reached right
// now and the same request will likely work in a few seconds: a connection
// that could not be made or timed out (Aurora resuming from a pause), a
// server that is starting up or shutting down, a connection lost mid-way.
// Every answer that says "the database is resuming" comes from this one
// classification. An authentication or configuration error is not
// unavailability: retrying will not help.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "57P03", // cannot_connect_now: "the database system is starting up"
			pe.Code == "57P01", pe.Code == "57P02", // admin / crash shutdown
			pe.Code == "57P05",               // idle_session_timeout closed the session
			pe.Code == "53300",               // too_many_connections (capacity still scaling)
			strings.HasPrefix(pe.Code, "08"): // connection exception
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed) || pgconn.SafeToRetry(err)
}

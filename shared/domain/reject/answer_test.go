package reject_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
)

// The one mapping: every prefix, an unavailable database, a rate limit with
// its wait, a canceled request and an unexpected error, each to its HTTP
// status, wire text and Retry-After.
var prefixes = reject.Prefixes

func TestMap(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("store: acquire connection: %w", err) }
	limited := &ratelimit.Exceeded{Err: reject.New(reject.RateLimited, "over 4 events per minute; try again in 12 s"), RetryAfter: 12 * time.Second}
	for _, c := range []struct {
		name   string
		err    error
		class  reject.Class
		status int
		text   string
		retry  int
	}{
		{"invalid", reject.Invalidf("bad filter"), reject.Refused, 400, "invalid: bad filter", 0},
		{"restricted", reject.Restrictedf("members only"), reject.Refused, 403, "restricted: members only", 0},
		{"blocked", reject.New(reject.Blocked, "banned"), reject.Refused, 403, "blocked: banned", 0},
		{"auth-required", reject.New(reject.AuthRequired, "sign in"), reject.Refused, 401, "auth-required: sign in", 0},
		{"duplicate", reject.Duplicatef("have it"), reject.Refused, 409, "duplicate: have it", 0},
		{"rate-limited without a wait", reject.New(reject.RateLimited, "10 reactions"), reject.Refused, 429, "rate-limited: 10 reactions", 0},
		{"error prefix", reject.New(reject.Internal, "said on purpose"), reject.Refused, 503, "error: said on purpose", 0},
		{"wrapped rejection", fmt.Errorf("wsrelay: community: %w", reject.Restrictedf("no community")), reject.Refused, 403, "restricted: no community", 0},
		{"rate limit exceeded", limited, reject.Refused, 429, "rate-limited: over 4 events per minute; try again in 12 s", 12},
		{"rate limit exceeded, wrapped", fmt.Errorf("check: %w", limited), reject.Refused, 429, "rate-limited: over 4 events per minute; try again in 12 s", 12},
		{"database unavailable (classified by the store)", wrap(fmt.Errorf("starting up: %w", reject.ErrUnavailable)), reject.Unavailable, 503, reject.Resuming, 5},
		{"connect timeout", wrap(context.DeadlineExceeded), reject.Unavailable, 503, reject.Resuming, 5},
		{"connection refused", wrap(&net.OpError{Op: "dial", Err: errors.New("connection refused")}), reject.Unavailable, 503, reject.Resuming, 5},
		{"context canceled", wrap(context.Canceled), reject.Canceled, 503, reject.Opaque, 0},
		{"unexpected", errors.New("pq: relation \"secret_table\" does not exist"), reject.Unexpected, 503, reject.Opaque, 0},
		{"server error that is not unavailability", &pgconn.PgError{Code: "23505", Message: "duplicate key value violates unique constraint \"x\""}, reject.Unexpected, 503, reject.Opaque, 0},
	} {
		a := reject.Map(c.err)
		if a.Class != c.class || a.Status != c.status || a.Text != c.text || a.RetryAfter != c.retry {
			t.Errorf("%s: Map = %+v, want class %d status %d text %q retry %d", c.name, a, c.class, c.status, c.text, c.retry)
		}
		if p, _, _ := strings.Cut(a.Text, ": "); !slices.Contains(prefixes, reject.Prefix(p)) {
			t.Errorf("%s: %q has no NIP-01 prefix", c.name, a.Text)
		}
	}
	// Every prefix has its status: a new prefix cannot fall through.
	for _, p := range prefixes {
		if s := reject.Map(reject.New(p, "x")).Status; s < 400 || s == http.StatusInternalServerError {
			t.Errorf("prefix %s: status %d", p, s)
		}
	}
}

// Report logs what the client is not told, and only that.
func TestReportLogs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	ctx := context.Background()
	reject.Report(ctx, log, "test: op", reject.Invalidf("nope"))
	if buf.Len() != 0 {
		t.Fatalf("a rejection was logged: %s", buf.String())
	}
	a := reject.Report(ctx, log, "test: op", errors.New("pq: secret detail"))
	if a.Text != reject.Opaque || !strings.Contains(buf.String(), `"level":"ERROR"`) || !strings.Contains(buf.String(), "secret detail") {
		t.Fatalf("unexpected error: %+v, log %s", a, buf.String())
	}
	buf.Reset()
	reject.Report(ctx, log, "test: op", context.DeadlineExceeded)
	if !strings.Contains(buf.String(), `"level":"WARN"`) || !strings.Contains(buf.String(), "database unavailable") {
		t.Fatalf("unavailable: log %s", buf.String())
	}
}

func TestUnavailable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("store: acquire connection: %w", err) }
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		// The SQLSTATE codes are the store's to read (store/errors.go,
		// TestClassify); reject sees its mark.
		{"classified by the store", wrap(fmt.Errorf("store: begin read: %w", reject.ErrUnavailable)), true},
		{"a server error the store did not classify", wrap(&pgconn.PgError{Code: "57P03"}), false},
		{"deadline", wrap(context.DeadlineExceeded), true},
		{"refused", wrap(&net.OpError{Op: "dial", Err: errors.New("connection refused")}), true},
		{"eof", wrap(io.ErrUnexpectedEOF), true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"bad password", wrap(&pgconn.PgError{Code: "28P01"}), false},
		{"rejection", reject.Invalidf("nope"), false},
		{"plain", errors.New("boom"), false},
	} {
		if got := reject.Map(c.err).Class == reject.Unavailable; got != c.want {
			t.Errorf("%s: unavailable = %v, want %v", c.name, got, c.want)
		}
	}
	if m := reject.Map(wrap(context.DeadlineExceeded)).Text; m != reject.Resuming {
		t.Errorf("Message(timeout) = %q", m)
	}
	if m := reject.Map(reject.Invalidf("x")).Text; m != "invalid: x" {
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
		if reject.Map(err).Class != reject.Unavailable || !errors.Is(err, reject.ErrUnavailable) {
			t.Errorf("%s: %v is not classified as unavailable", addr, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: ping took %s with a 300ms connect timeout", addr, d)
		}
	}
}

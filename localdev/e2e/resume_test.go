package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Database states the proxy plays.
const (
	dbUp       int32 = iota // forwards to the real Postgres
	dbRefuse                // accepts and closes at once (a stopped server)
	dbHang                  // accepts and never answers (Aurora resuming)
	dbStarting              // answers "the database system is starting up" (57P03)
)

var dbStates = map[int32]string{dbRefuse: "stopped", dbHang: "silent", dbStarting: "starting up"}

// pgProxy sits between the relay and Postgres so a test can take the
// database away and bring it back under a running relay.
type pgProxy struct {
	ln     net.Listener
	target string
	state  atomic.Int32
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

func startProxy(t *testing.T, target string) *pgProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.set(dbRefuse) })
	go p.serve()
	return p
}

// set changes the state; leaving dbUp cuts every open connection.
func (p *pgProxy) set(s int32) {
	p.state.Store(s)
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *pgProxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns[c] = struct{}{}
	p.mu.Unlock()
}

func (p *pgProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		switch p.state.Load() {
		case dbUp:
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.track(c)
			p.track(up)
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		case dbRefuse:
			c.Close()
		case dbHang:
			p.track(c)
		case dbStarting:
			go func() {
				defer c.Close()
				be := pgproto3.NewBackend(c, c)
				msg, err := be.ReceiveStartupMessage()
				if _, ssl := msg.(*pgproto3.SSLRequest); err == nil && ssl {
					_, _ = c.Write([]byte("N"))
					_, err = be.ReceiveStartupMessage()
				}
				if err != nil {
					return
				}
				be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "57P03",
					Message: "the database system is starting up"})
				_ = be.Flush()
			}()
		}
	}
}

const connectTimeout = time.Second

// bound is how long an answer may take while the database is away: the
// connect timeout plus scheduling slack on a busy machine.
const bound = connectTimeout + 4*time.Second

func resumingRelay(t *testing.T) (*Relay, *pgProxy) {
	t.Helper()
	dsn := testkit.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	r := newRelayAt(t, u.String(), Options{Env: map[string]string{"DB_CONNECT_TIMEOUT": connectTimeout.String()}})
	return r, p
}

func newRelayAt(t *testing.T, dsn string, o Options) *Relay {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Start(ctx, dsn, suiteOptions(o))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// While the database is away, HTTP answers 503 with Retry-After and the
// resuming message, within the connect timeout; GET /healthz (and an
// anonymous deep=1) still answers 200 without it, and only an operator's
// deep check reports the database.
func TestHTTPWhileTheDatabaseResumes(t *testing.T) {
	r, p := resumingRelay(t)
	k := testkit.NewKey(t)
	query := func() (*http.Response, []byte, time.Duration) {
		body := []byte(`[{"kinds":[9],"limit":5}]`)
		req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/query", bytes.NewReader(body))
		req.Header.Set("Authorization", k.Token(t, http.MethodPost, r.HTTPURL+"/query", body, time.Now()))
		req.Header.Set("Content-Type", "application/json")
		return do(t, req)
	}
	events := func() (*http.Response, []byte, time.Duration) {
		ev := k.Event(t, 1, "while away")
		body, _ := json.Marshal(ev)
		req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/events", bytes.NewReader(body))
		req.Header.Set("Authorization", k.Token(t, http.MethodPost, r.HTTPURL+"/events", body, time.Now()))
		req.Header.Set("Content-Type", "application/json")
		return do(t, req)
	}
	get := func(path string) (*http.Response, []byte, time.Duration) {
		req, _ := http.NewRequest(http.MethodGet, r.HTTPURL+path, nil)
		return do(t, req)
	}
	// The deep check's figures are an operator's (NIP-98); anyone else
	// is told up, without the database.
	if err := community.AddOperator(ctxT(t), r.App.Store, r.App.Config.DefaultCommunity, k.Pub); err != nil {
		t.Fatal(err)
	}
	deep := func() (*http.Response, []byte, time.Duration) {
		req, _ := http.NewRequest(http.MethodGet, r.HTTPURL+"/healthz?deep=1", nil)
		req.Header.Set("Authorization", k.Token(t, http.MethodGet, r.HTTPURL+"/healthz?deep=1", nil, time.Now()))
		return do(t, req)
	}
	if resp, body, _ := query(); resp.StatusCode != 200 {
		t.Fatalf("database up: /query %d %s", resp.StatusCode, body)
	}
	for _, s := range []int32{dbRefuse, dbHang, dbStarting} {
		p.set(s)
		for _, path := range []string{"/healthz", "/healthz?deep=1"} {
			if resp, body, _ := get(path); resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"ok":true}` {
				t.Fatalf("%s: anonymous %s %d %s, want 200 without the database", dbStates[s], path, resp.StatusCode, body)
			}
		}
		for _, call := range []func() (*http.Response, []byte, time.Duration){query, events, deep} {
			resp, body, took := call()
			var e struct{ Error string }
			_ = json.Unmarshal(body, &e)
			if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || e.Error != reject.Resuming {
				t.Fatalf("%s: %s %d Retry-After %q body %s", dbStates[s], resp.Request.URL.Path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
			}
			if took > bound {
				t.Fatalf("%s: answered after %s, connect timeout %s", dbStates[s], took, connectTimeout)
			}
			t.Logf("database %s: %s answered 503 in %s", dbStates[s], resp.Request.URL, took.Round(time.Millisecond))
		}
	}
	p.set(dbUp)
	if resp, body, _ := query(); resp.StatusCode != 200 {
		t.Fatalf("database back: /query %d %s", resp.StatusCode, body)
	}
	if resp, body, _ := deep(); resp.StatusCode != 200 || !strings.Contains(string(body), `"database":"awake"`) {
		t.Fatalf("database back: deep health %d %s", resp.StatusCode, body)
	}
}

func do(t *testing.T, req *http.Request) (*http.Response, []byte, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body, time.Since(start)
}

// $connect succeeds with the database away. A sender without a key gets
// auth-required: for EVENT, REQ and COUNT, without the database (NIP-42:
// the connection's host resolves from the directory, its state lives in
// the session store, and the refusal is the same whether or not the
// community is served), within the connect timeout; an authenticated
// member's EVENT, REQ and COUNT get OK false / CLOSED with the resuming
// message; once the database is back, the same socket authenticates and
// everything works.
func TestWebSocketWhileTheDatabaseResumes(t *testing.T) {
	r, p := resumingRelay(t)
	u := testkit.NewKey(t)
	// answers sends EVENT, REQ and COUNT on rc and checks each answer's
	// message (want), each within bound; it returns how long they took.
	answers := func(rc *rawConn, who string, s int32, ev nostr.Event, want func(string) bool, wantText string) []time.Duration {
		t.Helper()
		start := time.Now()
		rc.sendJSON([]any{"EVENT", ev})
		ok := rc.expect("OK")
		if str(t, ok[1]) != ev.ID || string(ok[2]) != "false" || !want(str(t, ok[3])) {
			t.Fatalf("%s, %s: EVENT answered %s, want %s", dbStates[s], who, joinRaw(ok), wantText)
		}
		took := []time.Duration{time.Since(start)}
		for _, verb := range []string{"REQ", "COUNT"} {
			start = time.Now()
			rc.sendJSON([]any{verb, "s-" + verb, nostr.Filter{Kinds: []int{1}}})
			closed := rc.expect("CLOSED")
			if str(t, closed[1]) != "s-"+verb || !want(str(t, closed[2])) {
				t.Fatalf("%s, %s: %s answered %s, want %s", dbStates[s], who, verb, joinRaw(closed), wantText)
			}
			took = append(took, time.Since(start))
		}
		for i, d := range took {
			if d > bound {
				t.Fatalf("%s, %s: answer %d took %s, connect timeout %s", dbStates[s], who, i, d, connectTimeout)
			}
			took[i] = d.Round(time.Millisecond)
		}
		return took
	}
	// The directory's documents, as a deployment's provisioning writes
	// them (config.RefreshDirectory): a new connection's host resolves
	// without the database. (A host with no document while the database
	// is away is answered resuming: nothing can say what it serves.)
	if err := r.App.Directory.RefreshAll(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	authRequired := func(m string) bool { return strings.HasPrefix(m, string(reject.AuthRequired)) }
	resuming := func(m string) bool { return m == reject.Resuming }
	for _, s := range []int32{dbRefuse, dbHang, dbStarting} {
		p.set(s)
		rc := dialRaw(t, r) // $connect with the database away
		took := answers(rc, "no key", s, signed(t, u, 1, nil, "hello"), authRequired, "auth-required:")
		t.Logf("database %s: a sender without a key's EVENT, REQ, COUNT answered auth-required: in %v", dbStates[s], took)

		p.set(dbUp)
		rc.sendJSON([]any{"REQ", "after", nostr.Filter{Kinds: []int{1}}})
		challenge := str(t, rc.expect("AUTH")[1])
		if c := rc.expect("CLOSED"); str(t, c[1]) != "after" || !authRequired(str(t, c[2])) {
			t.Fatalf("database back: REQ answered %s", joinRaw(c))
		}
		rc.auth(r, u, challenge)
		ch := createChannelID()
		create := signed(t, u, 9007, nostr.Tags{{"h", ch}, {"name", "resumed"}, {"visibility", "open"}}, "")
		rc.sendJSON([]any{"EVENT", create})
		if ok := rc.expect("OK"); string(ok[2]) != "true" {
			t.Fatalf("database back: EVENT answered %s", joinRaw(ok))
		}

		// An authenticated member whose database goes away mid-session:
		// its EVENT, REQ and COUNT need the database, and say it resumes.
		p.set(s)
		msg := signed(t, u, 9, nostr.Tags{{"h", ch}}, "while away")
		took = answers(rc, "a member", s, msg, resuming, "the resuming answer")
		t.Logf("database %s: a member's EVENT, REQ, COUNT answered resuming in %v", dbStates[s], took)
		p.set(dbUp)
		rc.sendJSON([]any{"EVENT", msg})
		if ok := rc.expect("OK"); string(ok[2]) != "true" {
			t.Fatalf("database back mid-session: EVENT answered %s", joinRaw(ok))
		}
	}
}

// Command roundtrips counts, per WebSocket message, the database round
// trips, the session store's requests and the AWS calls (@connections
// posts, Lambda invokes) the relay makes. It builds localdev from -repo
// (so an older checkout can be measured the same way), runs it with its
// Postgres connections through a counting TCP proxy, its session store
// (a fresh table in the local DynamoDB) through a counting HTTP proxy and
// its AWS endpoints (WS_MANAGEMENT_ENDPOINT, LAMBDA_ENDPOINT) through
// another, then sends one message at a time and reports what each caused.
// A database round trip is one burst the client wrote before waiting for
// the server (pgx writes a query, or a whole batch, in one write); the
// pool's health pings are not counted. A session-store round is a run of
// requests in flight together (a request sent while none is in flight
// starts a new round): the rounds counted until the client has its answer
// are the ones the answer waited for at most; the requests counted after
// it are work the relay did once the client was answered. The local
// table's expiry sweep (Scan) is not counted.
//
//	source localdev/pg.sh && source localdev/ddb.sh && go run ./localdev/roundtrips [-inline-max 1]
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
)

var (
	dbTrips, posts, invokes atomic.Int64
	ddb                     ddbCounter
)

func main() {
	repo := flag.String("repo", ".", "checkout whose ./localdev is measured")
	inlineMax := flag.Int("inline-max", 0, "FANOUT_INLINE_MAX (0: default)")
	flag.Parse()
	if err := run(*repo, *inlineMax); err != nil {
		fmt.Fprintln(os.Stderr, "roundtrips:", err)
		os.Exit(1)
	}
}

func run(repo string, inlineMax int) error {
	ctx := context.Background()
	admin := os.Getenv("DATABASE_URL")
	if admin == "" {
		return errors.New("DATABASE_URL is not set")
	}
	dsn, drop, err := e2e.ScratchDatabase(ctx, admin, "roundtrips")
	if err != nil {
		return err
	}
	defer drop()
	u, _ := url.Parse(dsn)
	pgProxy, err := tcpProxy(u.Host)
	if err != nil {
		return err
	}
	u.Host = pgProxy
	ddbURL, table, err := sessionTable(ctx)
	if err != nil {
		return err
	}
	relayAddr := freeAddr()
	target, _ := url.Parse("http://" + relayAddr)
	rp := httputil.NewSingleHostReverseProxy(target)
	awsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() {
		_ = http.Serve(awsLn, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.Contains(r.URL.Path, "/@connections/"):
				posts.Add(1)
			case strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/"):
				invokes.Add(1)
			}
			rp.ServeHTTP(w, r)
		}))
	}()
	bin := filepath.Join(os.TempDir(), "roundtrips-localdev")
	build := exec.Command("go", "build", "-o", bin, "./localdev")
	build.Dir, build.Stderr = repo, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build %s/localdev: %w", repo, err)
	}
	cmd := exec.Command(bin)
	aws := "http://" + awsLn.Addr().String()
	cmd.Env = append(os.Environ(), "DATABASE_URL="+u.String(), "BUZZ_ADDR="+relayAddr, "LOG_LEVEL=error",
		"WS_MANAGEMENT_ENDPOINT="+aws, "LAMBDA_ENDPOINT="+aws, "DB_MAX_CONNS=1",
		"AWS_ENDPOINT_URL_DYNAMODB="+ddbURL, "SESSION_TABLE="+table)
	if inlineMax > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("FANOUT_INLINE_MAX=%d", inlineMax))
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", relayAddr); err == nil {
			c.Close()
			break
		}
		if i > 600 {
			return errors.New("relay did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ws := "ws://" + relayAddr
	// Round 1 warms the pool's one connection (its first use of a
	// statement prepares it: one more round trip); round 2 is reported.
	if err := script(ctx, ws, false); err != nil {
		return err
	}
	fmt.Println("| message | DB round trips | session store: rounds / requests until the answer | session store: requests after it | @connections posts | Lambda invokes |\n|---|---|---|---|---|---|")
	return script(ctx, ws, true)
}

func script(ctx context.Context, ws string, report bool) error {
	step := func(label string, f func() error) error {
		time.Sleep(300 * time.Millisecond)
		d0, p0, i0 := dbTrips.Load(), posts.Load(), invokes.Load()
		s0 := ddb.snapshot()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		s1 := ddb.snapshot()
		time.Sleep(300 * time.Millisecond)
		s2 := ddb.snapshot()
		if report {
			fmt.Printf("| %s | %d | %d / %d %s | %d %s | %d | %d |\n", label, dbTrips.Load()-d0,
				s1.rounds-s0.rounds, s1.requests-s0.requests, s1.ops(s0),
				s2.requests-s1.requests, s2.ops(s1), posts.Load()-p0, invokes.Load()-i0)
		}
		return nil
	}
	owner := nostr.GeneratePrivateKey()
	var pub *conn
	if err := step("connect (the WebSocket upgrade)", func() (err error) {
		pub, err = dial(ctx, ws)
		return err
	}); err != nil {
		return err
	}
	var challenge string
	if err := step("first message (REQ before AUTH: AUTH challenge + CLOSED)", func() error {
		pub.send(`["REQ","x",{"limit":0}]`)
		p := pub.next("AUTH")
		_ = json.Unmarshal(p[1], &challenge)
		pub.next("CLOSED")
		return pub.err
	}); err != nil {
		return err
	}
	if err := step("AUTH", func() error { pub.auth(ws, owner, challenge); return pub.err }); err != nil {
		return err
	}
	ch := uuid()
	if err := step("EVENT 9007 (create channel), no listener", func() error {
		pub.publish(owner, 9007, nostr.Tags{{"h", ch}, {"name", "rt"}, {"visibility", "open"}}, "")
		return pub.err
	}); err != nil {
		return err
	}
	if err := step("EVENT 9, no listener", func() error {
		pub.publish(owner, 9, nostr.Tags{{"h", ch}}, "alone")
		return pub.err
	}); err != nil {
		return err
	}
	var subs []*conn
	for range 2 {
		s, err := dial(ctx, ws)
		if err != nil {
			return err
		}
		s.send(`["REQ","x",{"limit":0}]`)
		p := s.next("AUTH")
		var c string
		_ = json.Unmarshal(p[1], &c)
		s.next("CLOSED")
		s.auth(ws, nostr.GeneratePrivateKey(), c)
		if s.err != nil {
			return s.err
		}
		subs = append(subs, s)
	}
	live := fmt.Sprintf(`["REQ","live",{"kinds":[9],"#h":[%q],"limit":0}]`, ch)
	if err := step("REQ live, 0 stored events (EOSE), the socket's first after AUTH", func() error {
		subs[0].send(live)
		subs[0].next("EOSE")
		return subs[0].err
	}); err != nil {
		return err
	}
	subs[1].send(live)
	subs[1].next("EOSE")
	for i := range 3 {
		if err := step(fmt.Sprintf("EVENT 9, 2 live subscribers (#%d)", i+1), func() error {
			pub.publish(owner, 9, nostr.Tags{{"h", ch}}, fmt.Sprintf("m%d", i))
			for _, s := range subs {
				s.next("EVENT")
			}
			return errors.Join(pub.err, subs[0].err, subs[1].err)
		}); err != nil {
			return err
		}
	}
	// reqStored sends a REQ of id sub for the channel's 4 stored events
	// and reads its answer to EOSE.
	reqStored := func(sub string) func() error {
		return func() error {
			pub.send(fmt.Sprintf(`["REQ",%q,{"kinds":[9],"#h":[%q],"limit":50}]`, sub, ch))
			for range 4 {
				pub.next("EVENT")
			}
			pub.next("EOSE")
			return pub.err
		}
	}
	if err := step("REQ limit 50, 4 stored events (4 EVENT + EOSE), the socket's first after AUTH", reqStored("q")); err != nil {
		return err
	}
	if err := step("REQ limit 50, 4 stored events, a later REQ on the socket", reqStored("q2")); err != nil {
		return err
	}
	if err := step("CLOSE", func() error { pub.send(`["CLOSE","q"]`); return pub.err }); err != nil {
		return err
	}
	if err := step("disconnect (a socket with 1 live subscription)", func() error {
		return subs[1].c.Close(websocket.StatusNormalClosure, "")
	}); err != nil {
		return err
	}
	_ = subs[0].c.Close(websocket.StatusNormalClosure, "")
	_ = pub.c.Close(websocket.StatusNormalClosure, "")
	return nil
}

type conn struct {
	c   *websocket.Conn
	err error
}

func dial(ctx context.Context, u string) (*conn, error) {
	c, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	return &conn{c: c}, nil
}

func (c *conn) send(s string) {
	if c.err == nil {
		c.err = c.c.Write(context.Background(), websocket.MessageText, []byte(s))
	}
}

// next reads until a message of verb arrives.
func (c *conn) next(verb string) []json.RawMessage {
	for c.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, data, err := c.c.Read(ctx)
		cancel()
		if err != nil {
			c.err = fmt.Errorf("waiting for %s: %w", verb, err)
			return nil
		}
		var p []json.RawMessage
		var v string
		if json.Unmarshal(data, &p) == nil && len(p) > 1 && json.Unmarshal(p[0], &v) == nil && v == verb {
			return p
		}
	}
	return nil
}

func (c *conn) auth(relay, sk, challenge string) {
	ev := nostr.Event{Kind: 22242, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"relay", relay}, {"challenge", challenge}}}
	_ = ev.Sign(sk)
	b, _ := json.Marshal([]any{"AUTH", ev})
	c.send(string(b))
	if p := c.next("OK"); p != nil && string(p[2]) != "true" {
		c.err = fmt.Errorf("AUTH refused: %s", p[3])
	}
}

func (c *conn) publish(sk string, kind int, tags nostr.Tags, content string) {
	ev := nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Tags: tags, Content: content}
	_ = ev.Sign(sk)
	b, _ := json.Marshal([]any{"EVENT", ev})
	c.send(string(b))
	if p := c.next("OK"); p != nil && string(p[2]) != "true" {
		c.err = fmt.Errorf("EVENT refused: %s", p[3])
	}
}

// tcpProxy forwards a local port to target, counting the client's bursts.
func tcpProxy(target string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				go func() { _, _ = io.Copy(c, s) }()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					// pgxpool pings a connection idle for over 1 s
					// before handing it out: not the relay's work.
					if n > 0 && !bytes.Contains(buf[:n], []byte("-- ping")) {
						dbTrips.Add(1)
					}
					if n > 0 {
						if _, werr := s.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), nil
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func uuid() string {
	var r [16]byte
	_, _ = rand.Read(r[:])
	h := hex.EncodeToString(r[:])
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
}

// ddbCounter counts the session store's requests by operation, and its
// rounds: a request sent while none is in flight starts one.
type ddbCounter struct {
	mu       sync.Mutex
	inflight int
	rounds   int
	requests int
	byOp     map[string]int
}

type ddbCount struct {
	rounds, requests int
	byOp             map[string]int
}

func (d *ddbCounter) start(op string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byOp == nil {
		d.byOp = map[string]int{}
	}
	if d.inflight == 0 {
		d.rounds++
	}
	d.inflight++
	d.requests++
	d.byOp[op]++
}

func (d *ddbCounter) done() {
	d.mu.Lock()
	d.inflight--
	d.mu.Unlock()
}

func (d *ddbCounter) snapshot() ddbCount {
	d.mu.Lock()
	defer d.mu.Unlock()
	return ddbCount{rounds: d.rounds, requests: d.requests, byOp: maps.Clone(d.byOp)}
}

// ops lists the requests since before by operation, as (Get 1, Update 2).
func (c ddbCount) ops(before ddbCount) string {
	var parts []string
	for op, n := range c.byOp {
		if d := n - before.byOp[op]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", strings.TrimSuffix(op, "Item"), d))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	slices.Sort(parts)
	return "(" + strings.Join(parts, ", ") + ")"
}

// sessionTable makes a fresh sessions table in the local DynamoDB
// (AWS_ENDPOINT_URL_DYNAMODB, as localdev/ddb.sh exports it) and returns
// a counting proxy's URL in front of that server, and the table's name.
func sessionTable(ctx context.Context) (string, string, error) {
	endpoint := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")
	if endpoint == "" {
		return "", "", errors.New("AWS_ENDPOINT_URL_DYNAMODB is not set (source localdev/ddb.sh)")
	}
	api, err := ddbsessions.Client(ctx)
	if err != nil {
		return "", "", err
	}
	table := "roundtrips-" + uuid()[:8]
	if err := ddbsessions.CreateTable(ctx, api, table); err != nil {
		return "", "", err
	}
	target, err := url.Parse(endpoint)
	if err != nil {
		return "", "", err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", err
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
			if op == "Scan" || op == "DescribeTable" {
				rp.ServeHTTP(w, r)
				return
			}
			ddb.start(op)
			defer ddb.done()
			rp.ServeHTTP(w, r)
		}))
	}()
	return "http://" + ln.Addr().String(), table, nil
}

// Command wsbench measures live delivery through the WebSocket relay: it
// runs the relay in-process behind the localdev emulator (127.0.0.1 only)
// on a fresh database of the Postgres at DATABASE_URL, opens -subs
// authenticated sockets subscribed to one channel, then
//
//  1. latency: publishes -latency-events events one after the other and
//     records, per subscriber and event, the time from just before the
//     EVENT was sent to its arrival (p50/p99/max);
//  2. throughput: -publishers sockets publish -events events as fast as
//     their OKs come back, while every subscriber listens; the ingest rate
//     is accepted events per second, with the OK latency (EVENT written to
//     OK read) of the publishers. The same burst runs once before any
//     subscriber connects: the rate with no listeners;
//  3. upgrade → AUTH: -auth-runs fresh sockets, one at a time, time the
//     WebSocket upgrade's answer to the ["AUTH", challenge] the relay
//     pushes before the client says anything;
//  4. REQ: -req-runs fresh sockets each ask for -req-events stored events
//     of the channel and time the REQ to its EOSE.
//
// The sessions live in a fresh table of the local DynamoDB, as make dev
// ships (source localdev/ddb.sh).
//
// -stuck sockets subscribe like the others and then never read: they are
// left out of the delivery figures, and the OK latencies show whether
// they hold a publisher. API Gateway's costs (localdev/emulator/costs.go)
// come from the environment as for `make dev` (APIGW_COSTS=on,
// APIGW_POST_LATENCY=20ms, ...) or -costs and -post-latency.
//
// Every subscriber must receive every event. Usage (after `make pg`):
//
//	DATABASE_URL=... go run ./localdev/wsbench -subs 500
//	DATABASE_URL=... go run ./localdev/wsbench -subs 500 -stuck 1 -costs -post-latency 20ms
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/localdev/wsclient"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/migrate"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

// Options of one run.
type Options struct {
	Subs          int
	LatencyEvents int
	Events        int
	Publishers    int
	DBConns       int
	DialParallel  int
	Timeout       time.Duration
	// InlineMax and BatchSize set FANOUT_INLINE_MAX and FANOUT_BATCH_SIZE
	// (0: shared/fanout's defaults); AsyncConcurrency the emulated fan-out
	// function's parallel runs (0: the emulator's default).
	InlineMax, BatchSize, AsyncConcurrency int
	// SDKPosts sends replies and fan-out Invokes through the AWS SDK and
	// the emulator's HTTP APIs instead of in process.
	SDKPosts bool
	// FanoutProcesses runs the fan-out function as processes of its own
	// binary at niceness FanoutNice (e2e.Options); 0: in process.
	FanoutProcesses, FanoutNice int
	// ListenerProcesses opens the subscriber sockets in that many child
	// processes of this binary at niceness ListenerNice (listeners.go);
	// 0: in this process, beside the relay.
	ListenerProcesses, ListenerNice int
	// Stuck sockets subscribe and never read again.
	Stuck int
	// ReqEvents is the limit of the REQ phase's filter, ReqRuns its REQs
	// (0: no REQ phase).
	ReqEvents, ReqRuns int
	// Costs are the emulated API Gateway and Lambda costs.
	Costs emulator.Costs
	// AuthRuns fresh sockets time the upgrade to the relay's pushed
	// ["AUTH", challenge] (0: none).
	AuthRuns int
}

// Result of one run.
type Result struct {
	Subs             int     `json:"subscribers"`
	SetupSeconds     float64 `json:"setup_seconds"`
	LatencyEvents    int     `json:"latency_events"`
	P50ms            float64 `json:"p50_ms"`
	P99ms            float64 `json:"p99_ms"`
	MaxMs            float64 `json:"max_ms"`
	Events           int     `json:"throughput_events"`
	Publishers       int     `json:"publishers"`
	IngestPerSecond  float64 `json:"ingest_events_per_second"`
	DeliveredPerSec  float64 `json:"deliveries_per_second"`
	Missing          int     `json:"missing_deliveries"`
	ThroughputP99ms  float64 `json:"throughput_p99_ms"`
	DeliveriesPerRun int     `json:"deliveries"`
	OKp50ms          float64 `json:"ok_p50_ms"`
	OKp99ms          float64 `json:"ok_p99_ms"`
	// The same burst before any subscriber connected.
	NoListenersPerSecond float64 `json:"no_listeners_ingest_events_per_second"`
	NoListenersOKp99ms   float64 `json:"no_listeners_ok_p99_ms"`
	RateVsNoListeners    float64 `json:"rate_vs_no_listeners"`
	AsyncRuns            int64   `json:"fanout_function_runs"`
	// OK latency of the one-at-a-time phase (the publisher alone).
	LatencyOKp50ms float64 `json:"latency_phase_ok_p50_ms"`
	LatencyOKp99ms float64 `json:"latency_phase_ok_p99_ms"`
	Stuck          int     `json:"stuck_subscribers"`
	// REQ phase: events per answer and REQ-to-EOSE times.
	ReqEvents    int     `json:"req_events"`
	ReqRuns      int     `json:"req_runs"`
	ReqEOSEp50ms float64 `json:"req_eose_p50_ms"`
	ReqEOSEp99ms float64 `json:"req_eose_p99_ms"`
	// Upgrade → AUTH phase: from the WebSocket upgrade's answer to the
	// challenge the relay pushes unasked.
	AuthRuns      int     `json:"auth_runs"`
	AuthP50ms     float64 `json:"upgrade_to_auth_p50_ms"`
	AuthP99ms     float64 `json:"upgrade_to_auth_p99_ms"`
	SessionStore  string  `json:"session_store"`
	PostLatencyMs float64 `json:"post_latency_ms"`
	InvokeMs      float64 `json:"invoke_overhead_ms"`
}

func main() {
	if os.Getenv(listenerEnv) != "" {
		listen()
	}
	var o Options
	flag.IntVar(&o.Subs, "subs", 500, "subscriber sockets")
	flag.IntVar(&o.LatencyEvents, "latency-events", 50, "events published one by one for the latency figures")
	flag.IntVar(&o.Events, "events", 200, "events published as fast as possible for the ingest rate")
	flag.IntVar(&o.Publishers, "publishers", 2, "publisher sockets in the throughput phase")
	flag.IntVar(&o.DBConns, "db-conns", 16, "pgx pool size of the relay (DB_MAX_CONNS)")
	flag.IntVar(&o.DialParallel, "dial-parallel", 50, "sockets being set up at once")
	flag.IntVar(&o.InlineMax, "inline-max", 0, "largest audience delivered inline (FANOUT_INLINE_MAX; 0: default)")
	flag.IntVar(&o.BatchSize, "batch-size", 0, "connections per fan-out invocation (FANOUT_BATCH_SIZE; 0: default)")
	flag.IntVar(&o.AsyncConcurrency, "async-concurrency", 0, "parallel runs of the emulated fan-out function (0: default)")
	flag.BoolVar(&o.SDKPosts, "sdk-posts", false, "post replies and invoke the fan-out function through the AWS SDK and the emulator's HTTP APIs (default: in process, as make dev)")
	flag.IntVar(&o.FanoutProcesses, "fanout-processes", 0, "run the fan-out function as this many processes of its own binary, as Lambda runs it on instances of its own (0: in this process)")
	flag.IntVar(&o.FanoutNice, "fanout-nice", 19, "niceness of the fan-out processes (0: the relay's priority)")
	flag.IntVar(&o.ListenerProcesses, "listener-processes", 0, "open the subscriber sockets in this many processes of their own, as remote clients (0: in this process)")
	flag.IntVar(&o.ListenerNice, "listener-nice", 19, "niceness of the listener processes (0: the relay's priority)")
	flag.IntVar(&o.Stuck, "stuck", 0, "subscriber sockets that never read after their REQ (not counted in the delivery figures)")
	flag.IntVar(&o.ReqEvents, "req-events", 50, "stored events each REQ of the REQ phase asks for")
	flag.IntVar(&o.ReqRuns, "req-runs", 20, "REQs of the REQ phase (0: none)")
	flag.IntVar(&o.AuthRuns, "auth-runs", 20, "fresh sockets timing the upgrade to the pushed AUTH challenge (0: none)")
	costs := flag.Bool("costs", false, "API Gateway's and Lambda's costs on (as APIGW_COSTS=on)")
	postLatency := flag.Duration("post-latency", -1, "latency of each @connections post (APIGW_POST_LATENCY; -1: from the environment)")
	flag.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "give up after this long")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run here")
	flag.Parse()
	getenv := os.Getenv
	if *costs {
		getenv = func(k string) string {
			if k == "APIGW_COSTS" {
				return "on"
			}
			return os.Getenv(k)
		}
	}
	var err error
	if o.Costs, err = emulator.CostsFromEnv(getenv); err != nil {
		fmt.Fprintln(os.Stderr, "wsbench:", err)
		os.Exit(1)
	}
	if *postLatency >= 0 {
		o.Costs.PostLatency = *postLatency
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "wsbench:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	res, err := Run(ctx, os.Getenv("DATABASE_URL"), o, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsbench:", err)
		os.Exit(1)
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(b))
	if res.Missing > 0 {
		pprof.StopCPUProfile()
		os.Exit(2)
	}
}

// Run benchmarks against a fresh database on the server of adminDSN.
func Run(ctx context.Context, adminDSN string, o Options, progress io.Writer) (*Result, error) {
	if adminDSN == "" {
		return nil, errors.New("DATABASE_URL is not set: run `make pg` and export it")
	}
	dsn, drop, err := freshDatabase(ctx, adminDSN)
	if err != nil {
		return nil, err
	}
	defer drop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	// Throughput is the measure here: the per-key rate limits are off.
	relay, err := e2e.Start(ctx, dsn, e2e.Options{MaxConns: o.DBConns, Log: log, Env: config.RateLimitsOff(),
		FanoutInlineMax: o.InlineMax, FanoutBatchSize: o.BatchSize, InProcess: !o.SDKPosts,
		FanoutProcesses: o.FanoutProcesses, FanoutNice: o.FanoutNice, Costs: o.Costs})
	if err != nil {
		return nil, err
	}
	defer relay.Close()
	relay.Lambda.Concurrency = o.AsyncConcurrency
	db, err := dbtest.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()

	b := &bench{o: o, relay: relay, db: db, sent: make([]atomic.Int64, o.LatencyEvents+o.Events)}
	owner := nostr.GeneratePrivateKey()
	pubs := make([]*client, max(o.Publishers, 1))
	for i := range pubs {
		if pubs[i], err = b.login(ctx, owner); err != nil {
			return nil, fmt.Errorf("publisher: %w", err)
		}
		defer pubs[i].Close()
	}
	b.channel = uuid.NewString()
	if _, err := pubs[0].publish(ctx, owner, 9007, nostr.Tags{{"h", b.channel}, {"name", "wsbench"}, {"visibility", "open"}}, ""); err != nil {
		return nil, fmt.Errorf("create channel: %w", err)
	}

	// Phase 0: the burst with nobody listening.
	base, baseTook, err := b.burst(ctx, pubs, owner, 0, o.Events, "base ")
	if err != nil {
		return nil, fmt.Errorf("burst without listeners: %w", err)
	}
	noListeners := float64(o.Events) / baseTook.Seconds()
	fmt.Fprintf(progress, "wsbench: %.1f events/s with no listeners\n", noListeners)

	start := time.Now()
	var subs []*client
	if o.ListenerProcesses > 0 {
		b.remotes, err = b.startListeners(ctx)
		defer func() {
			for _, r := range b.remotes {
				r.stop()
			}
		}()
		if err == nil {
			err = b.waitStored(ctx)
		}
	} else {
		subs, err = b.subscribe(ctx)
		for _, s := range subs {
			defer s.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	for range o.Stuck {
		c, err := b.stuck(ctx)
		if err != nil {
			return nil, fmt.Errorf("stuck subscriber: %w", err)
		}
		defer c.Close()
	}
	if o.Stuck > 0 {
		if err := b.waitStoredN(ctx, o.Subs+o.Stuck); err != nil {
			return nil, err
		}
	}
	res := &Result{Subs: o.Subs, SetupSeconds: time.Since(start).Seconds(), LatencyEvents: o.LatencyEvents, Events: o.Events, Publishers: len(pubs),
		Stuck: o.Stuck, PostLatencyMs: float64(o.Costs.PostLatency.Microseconds()) / 1000, InvokeMs: float64(o.Costs.InvokeOverhead.Microseconds()) / 1000}
	fmt.Fprintf(progress, "wsbench: %d subscribers ready in %.1fs\n", o.Subs, res.SetupSeconds)

	// Phase 1: one event at a time.
	var latOKs []time.Duration
	for seq := range o.LatencyEvents {
		d, err := b.send(ctx, pubs[0], owner, seq, "bench ")
		if err != nil {
			return nil, err
		}
		latOKs = append(latOKs, d)
		b.waitFor(ctx, subs, seq+1, 30*time.Second)
	}
	slices.Sort(latOKs)
	res.LatencyOKp50ms, res.LatencyOKp99ms = pct(latOKs, 50), pct(latOKs, 99)

	// Phase 2: publishers as fast as their OKs allow.
	total := o.LatencyEvents + o.Events
	start = time.Now()
	oks, took, err := b.burst(ctx, pubs, owner, o.LatencyEvents, total, "bench ")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "wsbench: burst with listeners %.3f-%.3f (unix s)\n",
		float64(start.UnixNano())/1e9, float64(start.Add(took).UnixNano())/1e9)
	b.waitFor(ctx, subs, total, 5*time.Minute)
	deliveredIn := time.Since(start)
	for _, r := range b.remotes {
		got, err := r.report(b.sent)
		if err != nil {
			return nil, err
		}
		subs = append(subs, got...)
	}
	b.remotes = nil
	lat := b.latencies(subs, 0, o.LatencyEvents)
	res.P50ms, res.P99ms, res.MaxMs = pct(lat, 50), pct(lat, 99), pct(lat, 100)
	res.IngestPerSecond = float64(o.Events) / took.Seconds()
	res.DeliveredPerSec = float64(o.Events*o.Subs) / deliveredIn.Seconds()
	res.ThroughputP99ms = pct(b.latencies(subs, o.LatencyEvents, total), 99)
	res.OKp50ms, res.OKp99ms = pct(oks, 50), pct(oks, 99)
	res.NoListenersPerSecond, res.NoListenersOKp99ms = noListeners, pct(base, 99)
	res.RateVsNoListeners = res.IngestPerSecond / noListeners
	res.Missing = total * o.Subs
	for _, s := range subs {
		res.Missing -= s.count()
		res.DeliveriesPerRun += s.count()
	}
	relay.Lambda.Wait()
	res.AsyncRuns = relay.Lambda.RunsOf(emulator.FanoutFunction)

	res.SessionStore = "dynamodb (local)"
	// Phase 3: the challenge pushed at connect, on fresh sockets.
	if o.AuthRuns > 0 {
		auths, err := b.authPushes(ctx)
		if err != nil {
			return nil, fmt.Errorf("auth phase: %w", err)
		}
		res.AuthRuns = o.AuthRuns
		res.AuthP50ms, res.AuthP99ms = pct(auths, 50), pct(auths, 99)
	}

	// Phase 4: REQs answered with ReqEvents stored events each.
	if o.ReqRuns > 0 {
		reqs, err := b.reqs(ctx, owner)
		if err != nil {
			return nil, fmt.Errorf("req phase: %w", err)
		}
		res.ReqEvents, res.ReqRuns = o.ReqEvents, o.ReqRuns
		res.ReqEOSEp50ms, res.ReqEOSEp99ms = pct(reqs, 50), pct(reqs, 99)
	}
	return res, nil
}

// reqs times ReqRuns REQs, each on a fresh socket of sk, from the REQ
// written to its EOSE read; each answer must hold ReqEvents events.
func (b *bench) reqs(ctx context.Context, sk string) ([]time.Duration, error) {
	var out []time.Duration
	for i := range b.o.ReqRuns {
		c, err := b.dial(ctx, sk)
		if err != nil {
			return nil, err
		}
		sub := "q" + strconv.Itoa(i)
		start := time.Now()
		err = c.Send(ctx, []any{"REQ", sub, map[string]any{"kinds": []int{9}, "#h": []string{b.channel}, "limit": b.o.ReqEvents}})
		n := 0
		for err == nil {
			var p []json.RawMessage
			if p, err = c.Next(ctx); err != nil {
				break
			}
			if v := wsclient.Verb(p); v == "EVENT" {
				n++
			} else if v == "EOSE" {
				break
			} else if v == "CLOSED" {
				err = fmt.Errorf("REQ closed: %s", p[len(p)-1])
			}
		}
		took := time.Since(start)
		c.Close()
		if err != nil {
			return nil, err
		}
		if n != b.o.ReqEvents {
			return nil, fmt.Errorf("REQ answered with %d events before EOSE, want %d", n, b.o.ReqEvents)
		}
		out = append(out, took)
	}
	slices.Sort(out)
	return out, nil
}

// authPushes times AuthRuns fresh sockets, one at a time, from the
// WebSocket upgrade's answer (Dial returns) to the ["AUTH", challenge]
// the relay pushes before the client sends anything.
func (b *bench) authPushes(ctx context.Context) ([]time.Duration, error) {
	var out []time.Duration
	for range b.o.AuthRuns {
		c, err := wsclient.Dial(ctx, b.relay.WSURL)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		p, err := c.Next(wctx)
		cancel()
		took := time.Since(start)
		c.Close()
		if err != nil {
			return nil, fmt.Errorf("no frame within 30 s of the upgrade: %w", err)
		}
		if wsclient.Verb(p) != "AUTH" {
			return nil, fmt.Errorf("first frame after the upgrade is %s, want AUTH", p[0])
		}
		out = append(out, took)
	}
	slices.Sort(out)
	return out, nil
}

// stuck opens a socket that subscribes to the channel and never reads
// again: its messages pile up in the relay's (the emulator's) buffers.
func (b *bench) stuck(ctx context.Context) (*wsclient.Conn, error) {
	c, err := b.dial(ctx, nostr.GeneratePrivateKey())
	if err != nil {
		return nil, err
	}
	if err := c.Send(ctx, []any{"REQ", "live", map[string]any{"kinds": []int{9}, "#h": []string{b.channel}, "limit": 0}}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

type bench struct {
	o       Options
	relay   *e2e.Relay
	db      *dbtest.DB // the bench's own look at the relay's tables
	channel string
	sent    []atomic.Int64 // unix nanos just before EVENT seq was written
	remotes []*remote      // listener processes, until they reported
}

// client is one subscriber's or publisher's socket.
type client struct {
	*wsclient.Conn
	oks  chan []json.RawMessage // OK messages (publishers)
	mu   sync.Mutex
	got  map[int]time.Duration // seq -> latency (subscribers)
	done chan struct{}
}

func (c *client) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// dial opens a socket and authenticates it as secret key sk (NIP-42); a
// refused upgrade (the emulated new-connection quota's 429) is tried again.
func (b *bench) dial(ctx context.Context, sk string) (*wsclient.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var conn *wsclient.Conn
	var err error
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		if conn, err = wsclient.Dial(dctx, b.relay.WSURL); err == nil || dctx.Err() != nil {
			break
		}
		time.Sleep(wait)
	}
	if err != nil {
		return nil, err
	}
	if err := conn.Login(dctx, b.relay.WSURL, sk); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// login opens a socket authenticated as sk (dial) and reads it.
func (b *bench) login(ctx context.Context, sk string) (*client, error) {
	conn, err := b.dial(ctx, sk)
	if err != nil {
		return nil, err
	}
	cl := &client{Conn: conn, oks: make(chan []json.RawMessage, 4), got: map[int]time.Duration{}, done: make(chan struct{})}
	go cl.readLoop(ctx, b)
	return cl, nil
}

// readLoop dispatches OKs and records live events until the socket ends.
func (c *client) readLoop(ctx context.Context, b *bench) {
	defer close(c.done)
	for {
		data, err := c.Read(ctx)
		if err != nil {
			return
		}
		// The live events are most of the traffic: find their sequence
		// number without decoding them, so that 5,000 bench sockets cost
		// the machine less than the relay they measure.
		if seq, ok := benchSeq(data); ok {
			if seq < 0 || seq >= len(b.sent) {
				continue
			}
			lat := time.Duration(time.Now().UnixNano() - b.sent[seq].Load())
			c.mu.Lock()
			c.got[seq] = lat
			c.mu.Unlock()
			continue
		}
		var p []json.RawMessage
		if json.Unmarshal(data, &p) != nil || len(p) == 0 {
			continue
		}
		if wsclient.Verb(p) == "OK" {
			c.oks <- p
		}
	}
}

// benchSeq is N of an ["EVENT",…] message whose content is "bench N".
func benchSeq(data []byte) (int, bool) {
	if !bytes.HasPrefix(data, []byte(`["EVENT"`)) {
		return 0, false
	}
	const marker = `"content":"bench `
	i := bytes.Index(data, []byte(marker))
	if i < 0 {
		return 0, false
	}
	rest := data[i+len(marker):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(string(rest[:j]))
	return n, err == nil
}

func (c *client) publish(ctx context.Context, sk string, kind int, tags nostr.Tags, content string) (string, error) {
	ev := nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Tags: tags, Content: content}
	if err := ev.Sign(sk); err != nil {
		return "", err
	}
	if err := c.Send(ctx, []any{"EVENT", ev}); err != nil {
		return "", err
	}
	return ev.ID, c.waitOK(ctx, ev.ID)
}

func (c *client) waitOK(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case p := <-c.oks:
		var got string
		_ = json.Unmarshal(p[1], &got)
		if got != id || string(p[2]) != "true" {
			return fmt.Errorf("publish refused: %s %s", p[2], p[len(p)-1])
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no OK for %s: %w", id, ctx.Err())
	}
}

// send publishes event seq with content prefix+seq, stamping the send time
// of a "bench " event first, and returns the time to its OK.
func (b *bench) send(ctx context.Context, p *client, sk string, seq int, prefix string) (time.Duration, error) {
	ev := nostr.Event{Kind: 9, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", b.channel}}, Content: prefix + strconv.Itoa(seq)}
	if err := ev.Sign(sk); err != nil {
		return 0, err
	}
	start := time.Now()
	if prefix == "bench " {
		b.sent[seq].Store(start.UnixNano())
	}
	if err := p.Send(ctx, []any{"EVENT", ev}); err != nil {
		return 0, fmt.Errorf("publish %d: %w", seq, err)
	}
	err := p.waitOK(ctx, ev.ID)
	return time.Since(start), err
}

// burst has the publishers send events from..to-1 as fast as their OKs
// come back; it returns the OK latencies (sorted) and the time it took.
func (b *bench) burst(ctx context.Context, pubs []*client, sk string, from, to int, prefix string) ([]time.Duration, time.Duration, error) {
	var next atomic.Int64
	next.Store(int64(from))
	var mu sync.Mutex
	var oks []time.Duration
	start := time.Now()
	var wg sync.WaitGroup
	errc := make(chan error, len(pubs))
	for _, p := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seq := next.Add(1) - 1
				if seq >= int64(to) {
					return
				}
				d, err := b.send(ctx, p, sk, int(seq), prefix)
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				oks = append(oks, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errc)
	if err := <-errc; err != nil {
		return nil, 0, err
	}
	slices.Sort(oks)
	return oks, took, nil
}

// subscribe opens the subscriber sockets, DialParallel at a time.
func (b *bench) subscribe(ctx context.Context) ([]*client, error) {
	subs := make([]*client, b.o.Subs)
	sem := make(chan struct{}, max(b.o.DialParallel, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := range subs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := func() error {
				cl, err := b.login(ctx, nostr.GeneratePrivateKey())
				if err != nil {
					return err
				}
				subs[i] = cl
				if err := cl.Send(ctx, []any{"REQ", "live", map[string]any{"kinds": []int{9}, "#h": []string{b.channel}, "limit": 0}}); err != nil {
					return err
				}
				return nil
			}()
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("subscriber %d: %w", i, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var out []*client
	for _, s := range subs {
		if s != nil {
			out = append(out, s)
		}
	}
	if first != nil {
		return out, first
	}
	return out, b.waitStored(ctx)
}

// waitStored waits until the relay stored every subscriber's REQ: they
// were sent without waiting for EOSE (the read loops own the sockets).
func (b *bench) waitStored(ctx context.Context) error { return b.waitStoredN(ctx, b.o.Subs) }

// waitStoredN waits until n live subscriptions are stored.
func (b *bench) waitStoredN(ctx context.Context, n int) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		got, err := b.storedLive(ctx)
		if err != nil {
			return err
		}
		if got == n {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("subscriptions were not all stored within 30 s")
}

// storedLive counts the stored "live" subscriptions of the channel, in
// the session store holds (session.Store).
func (b *bench) storedLive(ctx context.Context) (int, error) {
	var community string
	if err := b.db.QueryRow(ctx, `SELECT community_id FROM channels WHERE id = $1`, b.channel).Scan(&community); err != nil {
		return 0, fmt.Errorf("community of the channel: %w", err)
	}
	subs, err := b.relay.App.Sessions.AudienceRange(ctx, session.AudienceRangeParams{Community: community, Channels: []string{b.channel},
		Cutoff: math.MaxInt64, After: "", Through: "\U0010FFFF"})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range subs {
		if s.Sub == "live" {
			n++
		}
	}
	return n, nil
}

// waitFor waits (bounded) until every subscriber has n events.
func (b *bench) waitFor(ctx context.Context, subs []*client, n int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		all := true
		for _, s := range subs {
			if s.count() < n {
				all = false
				break
			}
		}
		for _, r := range b.remotes {
			if r.min.Load() < int64(n) {
				all = false
			}
		}
		if all {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (b *bench) latencies(subs []*client, from, to int) []time.Duration {
	var out []time.Duration
	for _, s := range subs {
		s.mu.Lock()
		for seq, d := range s.got {
			if seq >= from && seq < to {
				out = append(out, d)
			}
		}
		s.mu.Unlock()
	}
	slices.Sort(out)
	return out
}

func pct(d []time.Duration, p int) float64 {
	if len(d) == 0 {
		return 0
	}
	i := (len(d)*p + 99) / 100
	i = min(max(i-1, 0), len(d)-1)
	return float64(d[i].Microseconds()) / 1000
}

// freshDatabase creates and migrates a scratch database next to adminDSN's.
func freshDatabase(ctx context.Context, adminDSN string) (string, func(), error) {
	dsn, drop, err := e2e.ScratchDatabase(ctx, adminDSN, "wsbench")
	if err != nil {
		return "", nil, err
	}
	if _, err := migrate.Up(ctx, dsn); err != nil {
		drop()
		return "", nil, fmt.Errorf("migrate: %w", err)
	}
	return dsn, drop, nil
}

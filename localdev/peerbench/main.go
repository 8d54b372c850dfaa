// Command peerbench runs the same WebSocket load against this relay (as
// `make dev` runs it: localdev, NIP-42, NIP-29 channels) and against khatru
// with its Postgres event store (no auth, no groups; localdev/khatrupeer),
// one after the other in one run on the same Postgres server, and prints
// both figures and their ratios. Both are built from the repository and run
// as processes; khatru's module is its own, so khatru is never a dependency
// of the relay.
//
// -order names the relays run, in that order: khatru; buzz, this relay as
// `make dev` ships it (the WebSocket sessions in DynamoDB: a fresh table of
// the local DynamoDB at AWS_ENDPOINT_URL_DYNAMODB, localdev/ddb.sh, per
// run; the directory in the bucket of localdev/s3.sh when it is sourced);
// base, the checkout -base as buzz runs. -rounds runs the order that many
// times, reversed every other round (khatru, buzz, buzz, khatru, ...), so
// that neither relay always meets the machine's later load; the table
// gives each relay's median over its runs, and each run's figures follow.
//
// The relay runs with its shipped per-connection message limit
// (ratelimit.Defaults.MessagesPerMinute, 6,000 a minute) and the per-key
// limits off (one key publishes every event). No socket carries more than
// -per-socket messages (default five sixths of the limit), so none is ever
// refused: the one-socket ingest publishes -events events on one socket at
// a time, a new socket every -per-socket events; the parallel ingest on
// -sockets sockets at once, as many rounds of them as it takes.
//
// Load: -inflight EVENTs in flight per socket, each waiting for its OK; one
// socket at a time publishing -events events into one channel, then
// -sockets sockets publishing -events in all into another; -small events
// into a third channel. Then REQ {"kinds":[9],"#h":[ch],"limit":50} until EOSE, -reqs
// times on the small and on the big channel, and a deep page of the big
// channel (the same REQ with until the date of its oldest 10 %, which the
// one-socket ingest dates 600 s back: 0.9 × -events rows are newer), first
// as just loaded, then after
// ANALYZE. Every REQ must return 50 events newest first, then EOSE.
//
// Each relay gets a fresh database, dropped after the run; with -keep P the
// databases are P_khatru, P_base and P_buzz, made on first use and kept, so
// a later run with the same P meets a long-lived database (the earlier
// runs' channels and events, statistics as autovacuum left them);
// -fill N first publishes N more channels of -small events each.
//
// Usage (from the repository root):
//
//	source localdev/pg.sh && source localdev/s3.sh && source localdev/ddb.sh && go run ./localdev/peerbench
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/localdev/wsclient"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/service/wire"
)

type options struct {
	events, sockets, small, inflight, reqs, fill, perSocket, rounds int
	repo, base, keep, logLevel                                      string
}

// messageLimit is the shipped per-connection message limit (a minute).
var messageLimit = int(ratelimit.Defaults.MessagesPerMinute)

func main() {
	var o options
	flag.IntVar(&o.events, "events", 20000, "events of the one-socket ingest (and in total over -sockets)")
	flag.IntVar(&o.sockets, "sockets", 4, "sockets of the parallel ingest")
	flag.IntVar(&o.small, "small", 200, "events of the small channel")
	flag.IntVar(&o.inflight, "inflight", 200, "EVENTs in flight per socket")
	flag.IntVar(&o.reqs, "reqs", 50, "REQs per REQ figure")
	flag.StringVar(&o.repo, "repo", ".", "root of the relay's repository (khatru is built from its localdev/khatrupeer)")
	flag.StringVar(&o.base, "base", "", "another checkout of the relay (before a change), run as buzz is for an A/B ratio (name base in -order)")
	order := flag.String("order", "khatru,buzz", "relays to run, in this order: khatru, buzz (sessions in DynamoDB, as make dev), base (-base as buzz)")
	flag.StringVar(&o.keep, "keep", "", "prefix of kept databases (long-lived: reused by every run with this prefix); empty: fresh databases, dropped")
	flag.StringVar(&o.logLevel, "log", "error", "LOG_LEVEL of this relay's runs")
	flag.IntVar(&o.fill, "fill", 0, "channels of -small events published before the measured load (a long-lived database's other channels)")
	flag.IntVar(&o.perSocket, "per-socket", messageLimit*5/6, "most events one socket publishes (under the per-connection message limit)")
	flag.IntVar(&o.rounds, "rounds", 2, "times the order is run, reversed every other time")
	flag.Parse()
	if o.perSocket <= 0 || o.perSocket >= messageLimit {
		fail(fmt.Errorf("-per-socket must be above 0 and under the message limit %d", messageLimit))
	}
	dsn := os.Getenv("DATABASE_URL")
	if dsn == "" {
		fail(errors.New("DATABASE_URL is not set: run `make pg` in the repository and export it"))
	}
	ctx := context.Background()
	names := strings.Split(*order, ",")
	for _, name := range names {
		switch name {
		case "khatru", "buzz":
		case "base":
			if o.base == "" {
				fail(errors.New("-order names base: set -base"))
			}
		default:
			fail(fmt.Errorf("-order: unknown relay %q (khatru, buzz, base)", name))
		}
	}
	fmt.Printf("load: %d events per ingest, at most %d per socket (the per-connection message limit is %d a minute, as shipped; the per-key limits are off), %d in flight per socket; %d REQs per figure, %d per socket (within the relay's burst of %d posts a connection); %d round(s) of %s\n",
		o.events, o.perSocket, messageLimit, o.inflight, o.reqs, reqsPerSocket, wire.PostBurst, o.rounds, *order)
	start := time.Now()
	var runs [][]*result
	for round := range o.rounds {
		run := slices.Clone(names)
		if round%2 == 1 {
			slices.Reverse(run)
		}
		for _, name := range run {
			r, err := runOne(ctx, name, dsn, o)
			if err != nil {
				fail(fmt.Errorf("%s: %w", name, err))
			}
			runs = append(runs, []*result{r})
		}
	}
	var results []*result
	for _, name := range names {
		var mine []*result
		for _, r := range runs {
			if r[0].name == name {
				mine = append(mine, r[0])
			}
		}
		results = append(results, median(mine))
	}
	if o.rounds > 1 {
		fmt.Printf("medians over %d runs each:\n", o.rounds)
	}
	print(o, results)
	if o.rounds > 1 {
		fmt.Println("\neach run, in the order run:")
		for i, r := range runs {
			fmt.Printf("%d. %s: ingest 1 socket %.0f, %d sockets %.0f events/s; REQ p50 small %.1f, big %.1f, deep %.1f; analyzed %.1f, %.1f, %.1f ms\n",
				i+1, r[0].name, r[0].ingest1, o.sockets, r[0].ingestN, r[0].smallFresh.p50, r[0].bigFresh.p50, r[0].deepFresh.p50,
				r[0].smallAnalyzed.p50, r[0].bigAnalyze.p50, r[0].deepAnalyzed.p50)
		}
	}
	goals(o, results)
	fmt.Printf("took %s\n", time.Since(start).Round(time.Second))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "peerbench:", err)
	os.Exit(1)
}

// result is one relay's figures.
type result struct {
	name                                    string
	ingest1, ingestN                        float64 // events/s
	smallFresh, bigFresh, deepFresh         stats
	smallAnalyzed, bigAnalyze, deepAnalyzed stats
}

// stats are a REQ figure's times (ms) and its answers with fewer than 50
// events (not timed).
type stats struct {
	p50, p99 float64
	short    int
}

// runOne starts relay name over a fresh database and runs the load.
func runOne(ctx context.Context, name, adminDSN string, o options) (*result, error) {
	dsn, drop, err := database(ctx, adminDSN, name, o.keep)
	if err != nil {
		return nil, err
	}
	defer drop()
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	switch name {
	case "khatru":
		bin, err := build(filepath.Join(o.repo, "localdev", "khatrupeer"), ".", "peerbench-khatru")
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(bin, "-addr", addr)
	case "buzz", "base":
		repo := o.repo
		if name == "base" {
			repo = o.base
		}
		bin, err := build(repo, "./localdev", "peerbench-"+name+"-localdev")
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(bin)
	}
	env, dropTable, err := relayEnv(ctx, name)
	if err != nil {
		return nil, err
	}
	defer dropTable()
	// Throughput is the measure: the per-key rate limits are off (one key
	// publishes every event); the per-connection message limit is as
	// shipped (its counter is one of the session store's requests of
	// every message), and no socket reaches it (-per-socket).
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "RATE_") })
	cmd.Env = append(env, "DATABASE_URL="+dsn, "BUZZ_ADDR="+addr, "LOG_LEVEL="+o.logLevel,
		"RATE_EVENTS_PER_MIN=0", "RATE_EVENT_BYTES_PER_MIN=0", "RATE_READS_PER_MIN=0", "RATE_CHANNELS_PER_HOUR=0")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	wsURL := "ws://" + addr
	if err := waitUp(addr, 60*time.Second); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "peerbench: %s up on %s\n", name, wsURL)
	kind := "buzz" // base and pg are this relay too: AUTH, channels
	if name == "khatru" {
		kind = name
	}
	b := &bench{name: kind, url: wsURL, owner: nostr.GeneratePrivateKey(), inflight: o.inflight}
	if err := b.setup(ctx); err != nil {
		return nil, err
	}
	r := &result{name: name}
	for i := range o.fill {
		ch := uuid.NewString()
		if err := b.createChannel(ctx, ch); err != nil {
			return nil, err
		}
		if _, err := b.ingest(ctx, ch, 1, o.small); err != nil {
			return nil, err
		}
		if (i+1)%100 == 0 {
			fmt.Fprintf(os.Stderr, "peerbench: %s filled %d channels\n", name, i+1)
		}
	}
	big, four, small := uuid.NewString(), uuid.NewString(), uuid.NewString()
	for _, ch := range []string{big, four, small} {
		if err := b.createChannel(ctx, ch); err != nil {
			return nil, err
		}
	}
	// The deep page: 90 % of the big channel is newer than its until.
	until := nostr.Now() - deepAge
	b.deepAt = until
	r.ingest1, err = b.spread(ctx, big, 1, o.events, o.perSocket)
	b.deepAt = 0
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "peerbench: %s ingest 1 socket: %.0f events/s\n", name, r.ingest1)
	if r.ingestN, err = b.spread(ctx, four, o.sockets, o.events, o.perSocket); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "peerbench: %s ingest %d sockets: %.0f events/s\n", name, o.sockets, r.ingestN)
	if _, err = b.ingest(ctx, small, 1, o.small); err != nil {
		return nil, err
	}
	if r.smallFresh, err = b.reqs(ctx, small, 0, o.reqs); err != nil {
		return nil, err
	}
	if r.bigFresh, err = b.reqs(ctx, big, 0, o.reqs); err != nil {
		return nil, err
	}
	if r.deepFresh, err = b.reqs(ctx, big, until, o.reqs); err != nil {
		return nil, err
	}
	if err := dbtest.AnalyzeDatabase(ctx, dsn); err != nil {
		return nil, err
	}
	if r.smallAnalyzed, err = b.reqs(ctx, small, 0, o.reqs); err != nil {
		return nil, err
	}
	if r.bigAnalyze, err = b.reqs(ctx, big, 0, o.reqs); err != nil {
		return nil, err
	}
	if r.deepAnalyzed, err = b.reqs(ctx, big, until, o.reqs); err != nil {
		return nil, err
	}
	return r, nil
}

// relayEnv is relay name's environment and what ends it: this process's
// without the session settings, then for buzz and base a fresh sessions'
// table in the local DynamoDB (as make dev: SESSION_TABLE).
func relayEnv(ctx context.Context, name string) ([]string, func(), error) {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "SESSION_TABLE=")
	})
	switch name {
	case "buzz", "base":
		if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
			return nil, nil, errors.New("the sessions' store is not running: source localdev/ddb.sh (as make dev does), or leave buzz and base out of -order")
		}
		table, drop, err := e2e.SessionTable(ctx)
		if err != nil {
			return nil, nil, err
		}
		return append(env, "SESSION_TABLE="+table), drop, nil
	}
	return env, func() {}, nil
}

func print(o options, rs []*result) {
	find := func(n string) *result {
		for _, r := range rs {
			if r.name == n {
				return r
			}
		}
		return nil
	}
	k, z := find("khatru"), find("buzz")
	type row struct {
		label string
		get   func(*result) float64
		rate  bool
	}
	rows := []row{
		{fmt.Sprintf("ingest, 1 socket at a time, %d events, ≤ %d a socket (events/s)", o.events, o.perSocket), func(r *result) float64 { return r.ingest1 }, true},
		{fmt.Sprintf("ingest, %d sockets at once, %d events, ≤ %d a socket (events/s)", o.sockets, o.events, o.perSocket), func(r *result) float64 { return r.ingestN }, true},
		{fmt.Sprintf("REQ p50, %d-event channel, just loaded (ms)", o.small), func(r *result) float64 { return r.smallFresh.p50 }, false},
		{fmt.Sprintf("REQ p50, %d-event channel, just loaded (ms)", o.events), func(r *result) float64 { return r.bigFresh.p50 }, false},
		{fmt.Sprintf("REQ p50, deep page of the %d-event channel, just loaded (ms)", o.events), func(r *result) float64 { return r.deepFresh.p50 }, false},
		{fmt.Sprintf("REQ p50, %d-event channel, analyzed (ms)", o.small), func(r *result) float64 { return r.smallAnalyzed.p50 }, false},
		{fmt.Sprintf("REQ p50, %d-event channel, analyzed (ms)", o.events), func(r *result) float64 { return r.bigAnalyze.p50 }, false},
		{fmt.Sprintf("REQ p50, deep page of the %d-event channel, analyzed (ms)", o.events), func(r *result) float64 { return r.deepAnalyzed.p50 }, false},
		{fmt.Sprintf("REQ p99, %d-event channel, analyzed (ms)", o.events), func(r *result) float64 { return r.bigAnalyze.p99 }, false},
	}
	// One column per relay in the order run, then each relay of this
	// repository against khatru, and buzz against base.
	title := map[string]string{"khatru": "khatru + Postgres", "buzz": "this relay (make dev: sessions in DynamoDB)",
		"base": "base"}
	type pair struct{ a, b *result }
	var pairs []pair
	for _, r := range rs {
		if r.name != "khatru" && k != nil {
			pairs = append(pairs, pair{r, k})
		}
	}
	for _, other := range []string{"base"} {
		if o := find(other); o != nil && z != nil {
			pairs = append(pairs, pair{z, o})
		}
	}
	head, rule := "| figure |", "|---|"
	for _, r := range rs {
		head, rule = head+" "+title[r.name]+" |", rule+"---|"
	}
	for _, p := range pairs {
		head, rule = head+" "+p.a.name+" ÷ "+p.b.name+" |", rule+"---|"
	}
	fmt.Println(head)
	fmt.Println(rule)
	for _, rw := range rows {
		line := "| " + rw.label + " |"
		for _, r := range rs {
			line += " " + fmtNum(rw.get(r), rw.rate) + " |"
		}
		for _, p := range pairs {
			if rw.get(p.a) <= 0 || rw.get(p.b) <= 0 {
				line += " - |"
				continue
			}
			line += fmt.Sprintf(" %.2f |", rw.get(p.a)/rw.get(p.b))
		}
		fmt.Println(line)
	}
	fmt.Println("(ratios: events/s ÷ events/s, ms ÷ ms)")
	for _, r := range rs {
		n := 0
		for _, st := range []stats{r.smallFresh, r.bigFresh, r.deepFresh, r.smallAnalyzed, r.bigAnalyze, r.deepAnalyzed} {
			n += st.short
		}
		if n > 0 {
			fmt.Printf("%s: %d of %d REQs answered with fewer than 50 events (left out of the times)\n", r.name, n, 6*o.reqs)
		}
	}
}

func fmtNum(v float64, rate bool) string {
	if rate {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// build builds package pkg of the module in dir into a binary named name
// in the temporary directory and returns its path.
func build(dir, pkg, name string) (string, error) {
	bin := filepath.Join(os.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s in %s: %w", pkg, dir, err)
	}
	return bin, nil
}

// deepAge is how far back the big channel's oldest 10 % are dated (inside
// the relay's created_at window, relayinfo.CreatedAtWindow).
const deepAge = 600

type bench struct {
	deepAt   nostr.Timestamp // date of the next ingest's deepRows oldest (0: now)
	deepRows int
	name     string // "buzz" logs in (NIP-42) and creates its channels
	url      string
	owner    string // secret key of every event
	inflight int
	seq      atomic.Int64
	reader   *client
}

// client is one socket: a reader goroutine hands OKs, EVENTs and EOSEs out.
type client struct {
	*wsclient.Conn
	ok  chan okMsg
	sub chan []json.RawMessage // EVENT, EOSE, CLOSED
}

type okMsg struct {
	id       string
	accepted bool
	reason   string
}

func (b *bench) dial(ctx context.Context) (*client, error) {
	conn, err := wsclient.Dial(ctx, b.url)
	if err != nil {
		return nil, err
	}
	if b.name == "buzz" {
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := conn.Login(lctx, b.url, b.owner)
		cancel()
		if err != nil {
			conn.Close()
			return nil, err
		}
	}
	cl := &client{Conn: conn, ok: make(chan okMsg, 4*b.inflight), sub: make(chan []json.RawMessage, 256)}
	go cl.readLoop()
	return cl, nil
}

func (c *client) readLoop() {
	for {
		data, err := c.Read(context.Background())
		if err != nil {
			close(c.sub)
			return
		}
		var p []json.RawMessage
		if json.Unmarshal(data, &p) != nil || len(p) < 2 {
			continue
		}
		switch wsclient.Verb(p) {
		case "OK":
			var m okMsg
			_ = json.Unmarshal(p[1], &m.id)
			_ = json.Unmarshal(p[2], &m.accepted)
			if len(p) > 3 {
				_ = json.Unmarshal(p[3], &m.reason)
			}
			c.ok <- m
		case "EVENT", "EOSE", "CLOSED":
			c.sub <- p
		}
	}
}

func (b *bench) setup(ctx context.Context) error {
	var err error
	b.reader, err = b.dial(ctx)
	return err
}

// createChannel creates an open NIP-29 channel on this relay (khatru
// needs none: its h tags are plain tags).
func (b *bench) createChannel(ctx context.Context, ch string) error {
	if b.name != "buzz" {
		return nil
	}
	ev := nostr.Event{Kind: 9007, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", ch}, {"name", "peerbench " + ch[:8]}, {"visibility", "open"}}}
	if err := ev.Sign(b.owner); err != nil {
		return err
	}
	if err := b.reader.Send(ctx, []any{"EVENT", ev}); err != nil {
		return err
	}
	if ok := <-b.reader.ok; !ok.accepted {
		return fmt.Errorf("create channel: %s", ok.reason)
	}
	return nil
}

// spread publishes total events on n sockets at a time, no socket more
// than perSocket, as rounds of n new sockets (the last round's sockets
// share what is left), and returns accepted events per second over all
// rounds. The deep page's rows (deepAt) are the first tenth of the first
// round.
func (b *bench) spread(ctx context.Context, ch string, n, total, perSocket int) (float64, error) {
	var took time.Duration
	deep := b.deepAt
	b.deepRows = min(total/10, perSocket)
	for left := total; left > 0; {
		per := min(perSocket, (left+n-1)/n)
		socks := min(n, (left+per-1)/per)
		if socks*per > left {
			per = left / socks
		}
		if per == 0 {
			break
		}
		rate, err := b.ingest(ctx, ch, socks, per)
		if err != nil {
			return 0, err
		}
		took += time.Duration(float64(socks*per) / rate * float64(time.Second))
		left -= socks * per
		if left > 0 && left < socks { // what does not divide: one more socket
			per, socks = left, 1
			rate, err := b.ingest(ctx, ch, 1, left)
			if err != nil {
				return 0, err
			}
			took += time.Duration(float64(left) / rate * float64(time.Second))
			left = 0
		}
		b.deepAt = 0
	}
	b.deepAt = deep
	return float64(total) / took.Seconds(), nil
}

// ingest publishes per events on each of n new sockets, inflight at a time
// per socket, and returns accepted events per second.
func (b *bench) ingest(ctx context.Context, ch string, n, per int) (float64, error) {
	socks := make([]*client, n)
	evs := make([][]nostr.Event, n)
	for i := range socks {
		c, err := b.dial(ctx)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		socks[i] = c
		evs[i] = make([]nostr.Event, per)
		for j := range evs[i] {
			at := nostr.Now()
			if i == 0 && j < b.deepRows && b.deepAt != 0 { // the deep page's rows
				at = b.deepAt
			}
			ev := nostr.Event{Kind: 9, CreatedAt: at, Tags: nostr.Tags{{"h", ch}},
				Content: "peerbench " + strconv.FormatInt(b.seq.Add(1), 10)}
			if err := ev.Sign(b.owner); err != nil {
				return 0, err
			}
			evs[i][j] = ev
		}
	}
	var wg sync.WaitGroup
	errc := make(chan error, n)
	start := time.Now()
	for i, c := range socks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots := make(chan struct{}, b.inflight)
			done := make(chan error, 1)
			go func() { // OKs
				for k := range per {
					select {
					case m := <-c.ok:
						if !m.accepted {
							done <- fmt.Errorf("event refused: %s", m.reason)
							return
						}
						<-slots
					case <-time.After(60 * time.Second):
						done <- fmt.Errorf("no OK after %d of %d", k, per)
						return
					}
				}
				done <- nil
			}()
			for j := range evs[i] {
				select {
				case slots <- struct{}{}:
				case err := <-done: // refused, or no OK in time
					if err == nil {
						err = errors.New("OKs ended before the events")
					}
					errc <- err
					return
				}
				if err := c.Send(ctx, []any{"EVENT", evs[i][j]}); err != nil {
					errc <- err
					return
				}
			}
			if err := <-done; err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errc)
	if err := <-errc; err != nil {
		return 0, err
	}
	return float64(n*per) / took.Seconds(), nil
}

// reqsPerSocket is how many REQs of 50 events one socket sends: their
// 51 posts each stay within the relay's burst of posts a connection gets
// at once (wire.PostBurst, 512; past it a connection's posts are
// paced at wire.PostRate, 1,000 a second, so a loop of 50-event REQs
// on one socket would time the pacing, about 50 ms a REQ).
var reqsPerSocket = wire.PostBurst / 51

// reqs runs the REQ k times (with until, when not 0), reqsPerSocket on
// each socket (the reader, then fresh ones), and checks each answer: 50
// events, newest first, then EOSE.
func (b *bench) reqs(ctx context.Context, ch string, until nostr.Timestamp, k int) (stats, error) {
	var (
		ds  []time.Duration
		err error
	)
	short := 0
	f := map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 50}
	if until != 0 {
		f["until"] = until
	}
	for i := range k {
		if i > 0 && i%reqsPerSocket == 0 {
			// A fresh socket: the relay paces a connection's posts past
			// a burst (reqsPerSocket).
			old := b.reader
			if b.reader, err = b.dial(ctx); err != nil {
				return stats{}, err
			}
			old.Close()
		}
		id := "q" + strconv.Itoa(i)
		start := time.Now()
		if err := b.reader.Send(ctx, []any{"REQ", id, f}); err != nil {
			return stats{}, err
		}
		var got []nostr.Event
	read:
		for {
			select {
			case p, ok := <-b.reader.sub:
				if !ok {
					return stats{}, errors.New("socket closed during REQ")
				}
				switch wsclient.Verb(p) {
				case "EVENT":
					var sub string
					if json.Unmarshal(p[1], &sub) != nil || sub != id || len(p) < 3 {
						continue // a late frame of an earlier REQ
					}
					var ev nostr.Event
					_ = json.Unmarshal(p[2], &ev)
					got = append(got, ev)
				case "EOSE":
					var sub string
					if json.Unmarshal(p[1], &sub) != nil || sub != id {
						continue
					}
					break read
				case "CLOSED":
					return stats{}, fmt.Errorf("REQ closed: %s", p[len(p)-1])
				}
			case <-time.After(30 * time.Second):
				return stats{}, errors.New("no EOSE within 30 s")
			}
		}
		took := time.Since(start)
		if len(got) != 50 {
			// Counted and reported (stats.short), not timed: a relay that
			// answers short must not look fast, nor hide the rest.
			short++
			fmt.Fprintf(os.Stderr, "peerbench: %s: REQ %s returned %d events, want 50\n", b.name, id, len(got))
		} else {
			ds = append(ds, took)
		}
		// The relay posts a REQ's events several at a time, so they may
		// arrive in another order (README, Compatibility): they must be
		// the 50 newest, each once.
		if err := newest(got, ch, until); err != nil {
			return stats{}, err
		}
		if err := b.reader.Send(ctx, []any{"CLOSE", id}); err != nil {
			return stats{}, err
		}
	}
	if len(ds) == 0 {
		return stats{short: short}, fmt.Errorf("every REQ answered short (%d)", short)
	}
	slices.Sort(ds)
	at := func(p int) float64 {
		i := min(max((len(ds)*p+99)/100-1, 0), len(ds)-1)
		return float64(ds[i].Microseconds()) / 1000
	}
	return stats{p50: at(50), p99: at(99), short: short}, nil
}

// database is relay name's database: a fresh one dropped by drop, or with
// keep the database keep_name, made when missing and kept.
func database(ctx context.Context, adminDSN, name, keep string) (dsn string, drop func(), err error) {
	if keep == "" {
		return e2e.ScratchDatabase(ctx, adminDSN, "peerbench_"+name)
	}
	db := keep + "_" + name
	if dsn, err = dbtest.CreateDatabase(ctx, adminDSN, db, ""); err != nil {
		if dsn, err = dbtest.DatabaseDSN(adminDSN, db); err != nil {
			return "", nil, err
		}
		fmt.Fprintf(os.Stderr, "peerbench: %s reuses database %s\n", name, db)
	}
	return dsn, func() {}, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitUp(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s after %s", addr, limit)
}

// newest checks a REQ's answer as far as the bench can without the store:
// each event once, of channel ch, none after until (when not 0).
func newest(got []nostr.Event, ch string, until nostr.Timestamp) error {
	seen := map[string]bool{}
	for _, ev := range got {
		if seen[ev.ID] {
			return fmt.Errorf("REQ returned event %s twice", ev.ID)
		}
		seen[ev.ID] = true
		if h := ev.Tags.GetFirst([]string{"h", ch}); h == nil {
			return fmt.Errorf("REQ returned event %s of another channel", ev.ID)
		}
		if until != 0 && ev.CreatedAt > until {
			return fmt.Errorf("REQ returned event %s after until", ev.ID)
		}
	}
	return nil
}

// median is one relay's figures over its runs: each figure's median
// (the mean of the middle two of an even count).
func median(rs []*result) *result {
	if len(rs) == 1 {
		return rs[0]
	}
	m := &result{name: rs[0].name}
	pick := func(get func(*result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		slices.Sort(v)
		return (v[(len(v)-1)/2] + v[len(v)/2]) / 2
	}
	m.ingest1 = pick(func(r *result) float64 { return r.ingest1 })
	m.ingestN = pick(func(r *result) float64 { return r.ingestN })
	for _, f := range []func(*result) *stats{
		func(r *result) *stats { return &r.smallFresh }, func(r *result) *stats { return &r.bigFresh },
		func(r *result) *stats { return &r.deepFresh }, func(r *result) *stats { return &r.smallAnalyzed },
		func(r *result) *stats { return &r.bigAnalyze }, func(r *result) *stats { return &r.deepAnalyzed },
	} {
		f(m).p50 = pick(func(r *result) float64 { return f(r).p50 })
		f(m).p99 = pick(func(r *result) float64 { return f(r).p99 })
		for _, r := range rs {
			f(m).short += f(r).short
		}
	}
	return m
}

// goals prints issue 54's goals against khatru: ingest on 1 and on
// -sockets sockets at least khatru's, and every REQ p50 at most khatru's
// (medians when -rounds > 1).
func goals(o options, rs []*result) {
	var k, z *result
	for _, r := range rs {
		switch r.name {
		case "khatru":
			k = r
		case "buzz":
			z = r
		}
	}
	if k == nil || z == nil {
		return
	}
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	fmt.Printf("goal ingest 1 socket ≥ khatru: %s (%.0f vs %.0f events/s)\n", met(z.ingest1 >= k.ingest1), z.ingest1, k.ingest1)
	fmt.Printf("goal ingest %d sockets ≥ khatru: %s (%.0f vs %.0f events/s)\n", o.sockets, met(z.ingestN >= k.ingestN), z.ingestN, k.ingestN)
	for _, f := range []struct {
		label string
		get   func(*result) float64
	}{
		{"small, just loaded", func(r *result) float64 { return r.smallFresh.p50 }},
		{"big, just loaded", func(r *result) float64 { return r.bigFresh.p50 }},
		{"deep, just loaded", func(r *result) float64 { return r.deepFresh.p50 }},
		{"small, analyzed", func(r *result) float64 { return r.smallAnalyzed.p50 }},
		{"big, analyzed", func(r *result) float64 { return r.bigAnalyze.p50 }},
		{"deep, analyzed", func(r *result) float64 { return r.deepAnalyzed.p50 }},
	} {
		fmt.Printf("goal REQ p50 (%s) ≤ khatru: %s (%.1f vs %.1f ms)\n", f.label, met(f.get(z) <= f.get(k)), f.get(z), f.get(k))
	}
}

// Command idlebench measures what one key's REQs answered without the
// database (every since after the community's last event, answered from
// the sessions' last-commit mark) cost another key's write. It runs the
// relay in process behind the emulator with the sessions in the local
// DynamoDB (localdev/ddb.sh), as `make dev` does, on a fresh database of the
// Postgres at DATABASE_URL (per-key rate limits off), and times -writes
// POST /events of one key (kind 9s in its channel, one after the other,
// each to its answer) three times:
//
//  1. alone: the other key's -conns connections open and authenticated,
//     no REQ;
//  2. after: once another key sent -reqs REQs with a since -ahead of the
//     clock (default an hour: the far-future REQs) over
//     -conns connections (each connection sending its next REQ once the
//     last was answered), as the issue measured it; the first write is
//     also shown alone;
//  3. during: while the other key sends -reqs such REQs again. On one
//     machine the REQs' own work (the relay's invocations, the local
//     DynamoDB) competes with the writes for the CPU, which behind API
//     Gateway and DynamoDB it does not.
//
// It prints p50/p99/max of each, their ratios to the first, and what the
// REQs were answered: EOSE, or CLOSED by prefix. A write that fails is
// counted, not timed.
//
//	source localdev/ddb.sh && DATABASE_URL=... go run ./localdev/idlebench -reqs 10000 -conns 50 -writes 200
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/localdev/wsclient"
	"github.com/buzzrelay/relay/shared/postgres/migrate"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

// Options of one run.
type Options struct {
	Reqs, Conns, Writes int
	// Ahead is how far after the clock the REQs' since is: far (the
	// issue's flood) is left pending by every write; 1s is folded by the
	// next write (the costliest flood); 0 or less reads the database.
	Ahead   time.Duration
	Timeout time.Duration
}

// Latency is one run's write latencies.
type Latency struct {
	N             int
	P50, P99, Max time.Duration
	First         time.Duration
	Failed        int
}

func (l Latency) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	out := fmt.Sprintf("%d writes: p50 %v p99 %v max %v (first %v)", l.N, r(l.P50), r(l.P99), r(l.Max), r(l.First))
	if l.Failed > 0 {
		out += fmt.Sprintf(", %d failed", l.Failed)
	}
	return out
}

// Result is what a run measured.
type Result struct {
	Alone, After, During Latency
	// Answers counts each flood's REQs by answer: "EOSE", or CLOSED's
	// prefix ("restricted", "rate-limited", ...).
	Answers [2]map[string]int
	// Overlap is how many of the During writes ran while REQs were still
	// being sent.
	Overlap int
}

func main() {
	var o Options
	flag.IntVar(&o.Reqs, "reqs", 10000, "REQs with a far-future since from one key, in each flood")
	flag.IntVar(&o.Conns, "conns", 50, "connections the REQs are spread over")
	flag.IntVar(&o.Writes, "writes", 200, "POST /events timed in each run")
	flag.DurationVar(&o.Ahead, "ahead", time.Hour, "the REQs' since, after the clock (1s: each write folds them; 0: the database answers them)")
	flag.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "the whole run")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	res, err := Run(ctx, os.Getenv("DATABASE_URL"), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "idlebench:", err)
		os.Exit(1)
	}
	fmt.Printf("idlebench: alone: %v\n", res.Alone)
	fmt.Printf("idlebench: after %d REQs from one key over %d connections (%v): %v\n", o.Reqs, o.Conns, res.Answers[0], res.After)
	fmt.Printf("idlebench: during %d more (%v; %d writes overlapped): %v\n", o.Reqs, res.Answers[1], res.Overlap, res.During)
	for _, l := range []struct {
		name string
		l    Latency
	}{{"after", res.After}, {"during", res.During}} {
		fmt.Printf("idlebench: %s/alone: p50 %.2fx p99 %.2fx\n", l.name, ratio(l.l.P50, res.Alone.P50), ratio(l.l.P99, res.Alone.P99))
	}
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// Run runs the three measures on a fresh database of the server adminDSN
// names.
func Run(ctx context.Context, adminDSN string, o Options) (*Result, error) {
	if adminDSN == "" {
		return nil, errors.New("DATABASE_URL is not set: run `make pg` and export it")
	}
	if o.Conns < 1 || o.Writes < 1 {
		return nil, errors.New("-conns and -writes must be at least 1")
	}
	dsn, drop, err := e2e.ScratchDatabase(ctx, adminDSN, "idlebench")
	if err != nil {
		return nil, err
	}
	defer drop()
	if _, err := migrate.Up(ctx, dsn); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	relay, err := e2e.Start(ctx, dsn, e2e.Options{Log: log, Env: config.RateLimitsOff(), InProcess: true})
	if err != nil {
		return nil, err
	}
	defer relay.Close()

	w := &writer{url: relay.HTTPURL + "/events", sk: nostr.GeneratePrivateKey(), channel: uuid.NewString()}
	if _, err := w.post(ctx, 9007, nostr.Tags{{"h", w.channel}, {"name", "idlebench"}, {"visibility", "open"}}); err != nil {
		return nil, fmt.Errorf("create channel: %w", err)
	}
	// The other key's connections are open (authenticated: their state in
	// the bucket) in every run; only its REQs differ.
	f := &flood{o: o, url: relay.WSURL, sk: nostr.GeneratePrivateKey()}
	if err := f.open(ctx); err != nil {
		return nil, err
	}
	defer f.close()
	res := &Result{}
	if res.Alone, err = w.run(ctx, o.Writes, nil); err != nil {
		return nil, err
	}

	if res.Answers[0], err = f.send(ctx, nil); err != nil {
		return nil, err
	}
	if res.After, err = w.run(ctx, o.Writes, nil); err != nil {
		return nil, err
	}

	// During: the writes start once a tenth of the REQs went out.
	var sent atomic.Int64
	var flooding atomic.Bool
	flooding.Store(true)
	done := make(chan error, 1)
	go func() {
		var err error
		res.Answers[1], err = f.send(ctx, &sent)
		flooding.Store(false)
		done <- err
	}()
	for sent.Load() < int64(o.Reqs/10) && flooding.Load() {
		time.Sleep(time.Millisecond)
	}
	res.During, err = w.run(ctx, o.Writes, func() {
		if flooding.Load() {
			res.Overlap++
		}
	})
	if ferr := <-done; ferr != nil && err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// flood is the key whose REQs are answered from the last-commit mark.
type flood struct {
	o     Options
	url   string
	sk    string
	conns []*wsclient.Conn
	n     int // REQs sent so far (their sub ids)
}

func (f *flood) open(ctx context.Context) error {
	for range f.o.Conns {
		c, err := wsclient.Dial(ctx, f.url)
		if err != nil {
			return err
		}
		f.conns = append(f.conns, c)
		if err := c.Login(ctx, f.url, f.sk); err != nil {
			return fmt.Errorf("login: %w", err)
		}
	}
	return nil
}

func (f *flood) close() {
	for _, c := range f.conns {
		c.Close()
	}
}

// send sends f.o.Reqs REQs with a since f.o.Ahead ahead over f's
// connections, each after the last one's answer on its connection, and
// counts their answers; sent, when set, counts the REQs sent.
func (f *flood) send(ctx context.Context, sent *atomic.Int64) (map[string]int, error) {
	since := time.Now().Add(f.o.Ahead).Unix()
	base := f.n
	f.n += f.o.Reqs
	var next atomic.Int64
	answers := map[string]int{}
	var mu sync.Mutex
	errc := make(chan error, len(f.conns))
	var wg sync.WaitGroup
	for _, c := range f.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(f.o.Reqs) {
					return
				}
				if sent != nil {
					sent.Add(1)
				}
				sub := fmt.Sprintf("f%d", base+int(i))
				if err := c.Send(ctx, []any{"REQ", sub, map[string]any{"kinds": []int{9}, "since": since}}); err != nil {
					errc <- err
					return
				}
				answer, err := answerTo(ctx, c, sub)
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				answers[answer]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, fmt.Errorf("flood: %w", err)
	}
	return answers, nil
}

// answerTo reads c until the answer to REQ sub: "EOSE" or CLOSED's prefix.
func answerTo(ctx context.Context, c *wsclient.Conn, sub string) (string, error) {
	for {
		p, err := c.Next(ctx)
		if err != nil {
			return "", err
		}
		if len(p) < 2 {
			continue
		}
		var id string
		_ = json.Unmarshal(p[1], &id)
		if id != sub {
			continue
		}
		switch wsclient.Verb(p) {
		case "EOSE":
			return "EOSE", nil
		case "CLOSED":
			var reason string
			if len(p) > 2 {
				_ = json.Unmarshal(p[2], &reason)
			}
			prefix, _, _ := strings.Cut(reason, ":")
			return prefix, nil
		}
	}
}

// writer is the key whose writes are timed.
type writer struct {
	url, sk, channel string
	n                int
}

// run times n kind 9s, one after the other (a failed one is counted,
// not timed); each is called after each.
func (w *writer) run(ctx context.Context, n int, each func()) (Latency, error) {
	took := make([]time.Duration, 0, n)
	failed := 0
	for range n {
		w.n++
		d, err := w.post(ctx, 9, nostr.Tags{{"h", w.channel}}, fmt.Sprintf("idlebench %d", w.n))
		if ctx.Err() != nil {
			return Latency{}, ctx.Err()
		}
		if err != nil {
			failed++
		} else {
			took = append(took, d)
		}
		if each != nil {
			each()
		}
	}
	if len(took) == 0 {
		return Latency{}, fmt.Errorf("all %d writes failed", n)
	}
	first := took[0]
	slices.Sort(took)
	return Latency{N: len(took), P50: took[len(took)/2], P99: took[min(len(took)-1, len(took)*99/100)],
		Max: took[len(took)-1], First: first, Failed: failed}, nil
}

// post sends one event of w's key to POST /events with its NIP-98 token
// and returns how long the answer took; an event not accepted is an error.
func (w *writer) post(ctx context.Context, kind int, tags nostr.Tags, content ...string) (time.Duration, error) {
	ev := nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Tags: tags, Content: strings.Join(content, "")}
	if err := ev.Sign(w.sk); err != nil {
		return 0, err
	}
	body, _ := json.Marshal(ev)
	sum := sha256.Sum256(body)
	tok := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(),
		Tags: nostr.Tags{{"u", w.url}, {"method", "POST"}, {"payload", hex.EncodeToString(sum[:])}}}
	if err := tok.Sign(w.sk); err != nil {
		return 0, err
	}
	raw, _ := json.Marshal(tok)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Nostr "+base64.StdEncoding.EncodeToString(raw))
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("POST /events: %w", err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	var a struct {
		Accepted bool `json:"accepted"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &a) != nil || !a.Accepted {
		return 0, fmt.Errorf("POST /events: %d %s", resp.StatusCode, out)
	}
	return took, nil
}

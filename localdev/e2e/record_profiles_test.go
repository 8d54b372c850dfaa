package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/cost/model"
	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// profileLibraries are the libraries the recorder plays, as the cost tool
// names them (-client).
var profileLibraries = map[string]string{
	"buzz":        "Buzz desktop's relay session (block/buzz desktop/src/shared/api), played as buzz_session_test.go plays it",
	"ndk":         "@nostr-dev-kit/ndk 3.0.3",
	"welshman":    "@welshman/net 0.8.15",
	"nostr-tools": "nostr-tools 2.25.2",
}

// recordCommand records the profiles again (also `make record-profiles`).
const recordCommand = "BUZZ_RECORD_PROFILES=10m go test -count=1 -parallel 4 -timeout 60m -run TestRecordIdleProfiles ./localdev/e2e"

// tally counts, per relay, what the clients' own invocations cost.
type tally struct {
	statements func() int64
	requests   *awssdk.Requests
	connects   atomic.Int64
	messages   atomic.Int64
	mu         sync.Mutex
	inside     map[string]int64 // AWS requests within invocations
	byMessage  map[string]int64 // statements by "EventType body"
}

func (c *tally) wrap(h emulator.WebSocketHandler) emulator.WebSocketHandler {
	return func(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		switch ev.RequestContext.EventType {
		case "CONNECT":
			c.connects.Add(1)
		case "MESSAGE":
			c.messages.Add(1)
		}
		before, n := c.requests.Counts(), c.statements()
		resp, err := h(ctx, ev)
		after, ran := c.requests.Counts(), c.statements()-n
		c.mu.Lock()
		if ran > 0 {
			key := ev.RequestContext.EventType + " " + ev.Body
			if len(key) > 160 {
				key = key[:160] + "…"
			}
			c.byMessage[key] += ran
		}
		for k, v := range after {
			if d := v - before[k]; d > 0 {
				c.inside[k] += d
			}
		}
		c.mu.Unlock()
		return resp, err
	}
}

// snapshot is the tally at one moment.
type snapshot struct {
	at                            time.Time
	statements, connects, message int64
	inside, all                   map[string]int64
	pushRuns, posted              int64
}

func (c *tally) snap(r *Relay) snapshot {
	c.mu.Lock()
	inside := make(map[string]int64, len(c.inside))
	for k, v := range c.inside {
		inside[k] = v
	}
	c.mu.Unlock()
	return snapshot{at: time.Now(), statements: c.statements(), connects: c.connects.Load(), message: c.messages.Load(),
		inside: inside, all: c.requests.Counts(), pushRuns: r.Lambda.RunsOf(emulator.PushFunction), posted: r.WS.Posted()}
}

// phase is what happened between two snapshots (one client per relay:
// every post is to it).
func phase(a, b snapshot) model.Phase {
	aws := map[string]float64{}
	for k, v := range b.inside {
		if d := v - a.inside[k]; d > 0 {
			aws[k] = float64(d)
		}
	}
	return model.Phase{Connects: float64(b.connects - a.connects), MessagesIn: float64(b.message - a.message),
		FramesOut: float64(b.posted - a.posted), AWS: aws, Statements: float64(b.statements - a.statements)}
}

// TestRecordIdleProfiles records the idle session of each library the cost
// tool prices (go run ./localdev/cost -client buzz|ndk|welshman|nostr-tools),
// all four at once, each against a relay of its own as make dev ships it
// (the sessions' state in the session store, the liveness tick every
// 30 s): the client opens its session and makes its first reads of a
// channel (start), idles BUZZ_RECORD_PROFILES (a duration, 10m for the
// checked-in files) with its live subscriptions and its own timers, then
// goes away (end). What the relay counted (client messages, frames the
// client received, $connect, AWS requests of the client's invocations and
// of the liveness ticks, database statements and when they ran) is
// written to localdev/cost/profiles/<client>.json. Without the variable it
// is skipped: it is the recorder, not a check (the idle checks are
// TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements and the Buzz session
// test).
func TestRecordIdleProfiles(t *testing.T) {
	v := os.Getenv("BUZZ_RECORD_PROFILES")
	if v == "" {
		t.Skip("the cost profiles' recorder: BUZZ_RECORD_PROFILES=10m records them (" + recordCommand + ")")
	}
	idle, err := time.ParseDuration(v)
	if err != nil || idle < time.Minute {
		t.Fatalf("BUZZ_RECORD_PROFILES must be a duration of a minute or more, got %q", v)
	}
	if binaries != nil {
		t.Fatal("record in process (not BUZZ_LAMBDA=processes): the statements are counted on this process's pool")
	}
	node, dir := NodePackages(t, "nip29clients", "cost profiles' recorder", map[string]string{
		"@nostr-dev-kit/ndk": "3.0.3", "@welshman/net": "0.8.15", "@welshman/signer": "0.8.15", "nostr-tools": "2.25.2", "ws": "8.18.3",
	})
	commit := "unknown"
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	for _, client := range []string{"buzz", "ndk", "welshman", "nostr-tools"} {
		if only := os.Getenv("BUZZ_RECORD_ONLY"); only != "" && only != client {
			continue // BUZZ_RECORD_ONLY records one library
		}
		t.Run(client, func(t *testing.T) {
			t.Parallel()
			p := recordProfile(t, client, node, dir, idle)
			p.Recorded = time.Now().UTC().Format("2006-01-02") + " at " + commit
			b, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("..", "cost", "profiles", client+".json")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: start %+v; idle %+v; reconnect (by itself: %v) %+v; end %+v; bursts %v; tick %v", client, p.Start, p.Idle, p.Reconnects, p.Reconnect, p.End, p.IdleBursts, p.TickAWS)
		})
	}
}

func recordProfile(t *testing.T, client, node, dir string, idle time.Duration) model.Profile {
	c := &tally{requests: &awssdk.Requests{}, inside: map[string]int64{}, byMessage: map[string]int64{}}
	period := lambdas.LivenessDelaySeconds * time.Second
	r := StartTest(t, Options{LivenessPeriod: period, WrapWebSocket: c.wrap, Requests: c.requests})
	c.statements = r.App.Store.Statements
	alice, ra := loggedIn(t, r)
	ch := createChannel(t, ra, alice, "open")
	first := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "before the app opened")
	_ = ra.Close()
	settledStatements(t, r)
	// The app starts long after the community's last write (here, its
	// setup a moment ago): the sessions' clock moves past the settle
	// (session.ResumeSettle) rather than the test waiting it.
	advanceSessionsClock(r, time.Duration(session.ResumeSettle+1)*time.Second)
	s0 := c.snap(r)

	// Start: the client's session and first reads.
	var quit func() idleReport
	var app *buzzDesktop
	if client == "buzz" {
		app, _, _ = openBuzzSession(t, r, ch, first.ID)
	} else {
		quit = startIdleScript(t, node, dir, r, ch, client)
	}
	settledStatements(t, r)
	s1 := c.snap(r)

	// Idle, with the relay closing the socket halfway (as API Gateway does
	// after 2 hours): the bursts of statements, second by second, outside
	// the reconnection.
	var bursts []float64
	var sA, sB snapshot
	reconnects := false
	last := s1.statements
	watch := func(until time.Time) {
		for time.Now().Before(until) {
			time.Sleep(time.Second)
			if n := c.statements(); n != last {
				bursts = append(bursts, float64(time.Since(s1.at).Round(time.Second)/time.Second))
				last = n
			}
		}
	}
	watch(s1.at.Add(idle / 2))
	sA = c.snap(r)
	c.mu.Lock()
	clear(c.byMessage)
	c.mu.Unlock()
	// API Gateway closes the socket 2 hours after it opened: its answers
	// are that old by the replay (the clock moved past the settle again).
	advanceSessionsClock(r, time.Duration(session.ResumeSettle+1)*time.Second)
	for _, id := range r.WS.Connections() {
		_ = r.WS.DeleteConnection(context.Background(), id)
	}
	if app != nil {
		<-app.closed
		app = replayBuzzSession(t, r, app, first)
		reconnects = true
	} else {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !reconnects; time.Sleep(100 * time.Millisecond) {
			reconnects = c.connects.Load() > sA.connects
		}
	}
	time.Sleep(2 * time.Second) // what a reconnected client sends at once
	settledStatements(t, r)
	sB = c.snap(r)
	c.mu.Lock()
	for k, v := range c.byMessage {
		t.Logf("%s: the reconnection ran %d statements for %s", client, v, k)
	}
	c.mu.Unlock()
	last = sB.statements
	watch(sB.at.Add(idle - sA.at.Sub(s1.at)))
	s2 := c.snap(r)
	if app != nil {
		app.c.CloseNow()
	} else {
		rep := quit()
		for _, e := range rep.Effects {
			t.Logf("%s: %s", client, e)
		}
		for _, e := range rep.Libs[client].Effects {
			t.Logf("%s: %s", client, e)
		}
	}
	// End: its $disconnect.
	time.Sleep(time.Second)
	settledStatements(t, r)
	s3 := c.snap(r)

	// The idle phase is both halves, without the reconnection (the first
	// alone when the client did not come back).
	idlePhase := phase(s1, sA)
	idleSeconds := sA.at.Sub(s1.at).Seconds()
	second := phase(sB, s2)
	if reconnects {
		idleSeconds += s2.at.Sub(sB.at).Seconds()
	} else {
		second = model.Phase{}
	}
	idlePhase.Connects += second.Connects
	idlePhase.MessagesIn += second.MessagesIn
	idlePhase.FramesOut += second.FramesOut
	idlePhase.Statements += second.Statements
	for k, v := range second.AWS {
		idlePhase.AWS[k] += v
	}
	tick := map[string]float64{}
	from, to := sB, s2 // ticks with the client open
	if !reconnects {
		from, to = s1, sA
	}
	if ticks := to.pushRuns - from.pushRuns; ticks > 0 {
		for k, v := range to.all {
			outside := (v - from.all[k]) - (to.inside[k] - from.inside[k])
			if outside > 0 {
				tick[k] = float64(outside) / float64(ticks)
			}
		}
	}
	return model.Profile{
		Client: client, Library: profileLibraries[client], Command: recordCommand,
		LivenessSeconds: period.Seconds(), IdleSeconds: idleSeconds,
		Start: phase(s0, s1), Idle: idlePhase, End: phase(s2, s3), Reconnect: phase(sA, sB), Reconnects: reconnects,
		IdleBursts: bursts, TickAWS: tick,
	}
}

// startIdleScript runs nip29clients/idle.mjs for one library until it is
// idle; the function it answers ends the session and returns the report.
func startIdleScript(t *testing.T, node, dir string, r *Relay, ch, lib string) func() idleReport {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, "idle.mjs", r.WSURL, ch, lib)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if !ok || !strings.Contains(l, `"ready"`) {
			t.Fatalf("%s did not get idle: %q (stderr %s)", lib, l, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s not idle within 2 minutes (stderr %s)", lib, stderr.String())
	}
	return func() idleReport {
		if _, err := io.WriteString(stdin, "quit\n"); err != nil {
			t.Fatal(err)
		}
		var last string
		for l := range lines {
			last = l
		}
		var rep idleReport
		if err := json.Unmarshal([]byte(last), &rep); err != nil {
			t.Fatal(fmt.Errorf("idle.mjs %s printed %q: %w (stderr %s)", lib, last, err, stderr.String()))
		}
		return rep
	}
}

// replayBuzzSession is the app's reconnection after the relay closed its
// socket (block/buzz desktop/src/shared/api/relayReconnectReplay.ts): a
// new socket, sign-in on the pushed challenge, and its live subscriptions
// sent again with since the last event it saw less 5 s.
func replayBuzzSession(t *testing.T, r *Relay, prev *buzzDesktop, lastSeen nostr.Event) *buzzDesktop {
	t.Helper()
	app := dialBuzz(t, r)
	app.connect(prev.key)
	seen := int64(lastSeen.CreatedAt) - 5
	for id, f := range prev.live {
		g := maps.Clone(f)
		// buildReconnectReplayFilter: since max(its own, last seen - 5 s),
		// limit at most 500; the same subscription id.
		g["since"] = seen
		if s, ok := f["since"].(int64); ok {
			g["since"] = max(s, seen)
		}
		g["limit"] = min(f["limit"].(int), 500)
		app.req(id, g)
	}
	return app
}

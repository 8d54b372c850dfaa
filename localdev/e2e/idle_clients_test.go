package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// idleMinutes is how long TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements
// leaves the three clients idle: at least 5 minutes (issue 37), past
// NDK's 120 s keepalive twice and welshman's 30 s PING many times.
// BUZZ_E2E_IDLE (a Go duration) changes it while working on the test.
func idleMinutes(t *testing.T) time.Duration {
	d := 5*time.Minute + 10*time.Second
	if v := os.Getenv("BUZZ_E2E_IDLE"); v != "" {
		x, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("BUZZ_E2E_IDLE: %v", err)
		}
		d = x
	}
	return d
}

// invocations records, while the idle window is open, every WebSocket
// invocation that ran a database statement (by what it carried) and every
// $connect.
type invocations struct {
	count   func() int64 // the store's statements
	open    atomic.Bool
	connect atomic.Int64
	mu      sync.Mutex
	byBody  map[string]int64 // "EventType body" → statements
	ran     int64            // statements inside invocations
}

func (v *invocations) wrap(h emulator.WebSocketHandler) emulator.WebSocketHandler {
	return func(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		if !v.open.Load() {
			return h(ctx, ev)
		}
		if ev.RequestContext.EventType == "CONNECT" {
			v.connect.Add(1)
		}
		n := v.count()
		resp, err := h(ctx, ev)
		if d := v.count() - n; d > 0 {
			key := ev.RequestContext.EventType + " " + ev.Body
			if len(key) > 200 {
				key = key[:200] + "…"
			}
			v.mu.Lock()
			v.byBody[key] += d
			v.ran += d
			v.mu.Unlock()
		}
		return resp, err
	}
}

// idleReport is what nip29clients/idle.mjs prints last.
type idleReport struct {
	IdleMs int64 `json:"idleMs"`
	Libs   map[string]struct {
		Opens         int `json:"opens"`
		StartSent     int `json:"startSent"`
		StartReceived int `json:"startReceived"`
		Closes        int `json:"closes"`
		SignIns       int `json:"signIns"`
		Received      int `json:"received"`
		Liveness      int `json:"liveness"`
		Sent          []struct {
			T     int64  `json:"t"`
			Frame string `json:"frame"`
		} `json:"sent"`
		Events  []string `json:"events"`
		Effects []string `json:"effects"`
	} `json:"libs"`
	Effects []string `json:"effects"`
}

// TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements: NDK 3.0.3, welshman
// 0.8.15 (nip29clients/idle.mjs) and the Buzz desktop app (played as its
// source plays it: buzz_session_test.go) each open a session, make their
// first reads of a channel and hold live subscriptions, then idle
// together, in parallel, for at least 5 minutes with the relay as make
// dev ships it (the sessions' state in the session store, the liveness
// tick every 30 s) and the clients' own timers as their sources set them
// (NDK's 120 s keepalive probe, welshman's 30 s PING, the app's 60 s stall
// watchdog). During the idle minutes: the relay's pool runs no statement
// (an idle app must let Aurora pause; on failure the test names the
// messages that reached it), no client reconnects (no $connect; each
// library opened one socket and closed none), the app never goes 60 s
// without a frame and sees only the liveness frame; afterwards a new
// message still arrives live on each. In BUZZ_LAMBDA=processes mode the
// functions' own pools serve, whose statements this process cannot count:
// skipped there (the in-process suite runs it).
func TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements(t *testing.T) {
	skipStatementsInProcesses(t)
	node, dir := NodePackages(t, "nip29clients", "idle test of NDK, welshman and the Buzz desktop app", map[string]string{
		"@nostr-dev-kit/ndk": "3.0.3", "@welshman/net": "0.8.15", "@welshman/signer": "0.8.15", "nostr-tools": "2.25.2", "ws": "8.18.3",
	})
	idle := idleMinutes(t)
	v := &invocations{byBody: map[string]int64{}}
	r := StartTest(t, Options{LivenessPeriod: lambdas.LivenessDelaySeconds * time.Second, WrapWebSocket: v.wrap})
	v.count = r.App.Store.Statements

	alice, ra := loggedIn(t, r)
	ch := createChannel(t, ra, alice, "open")
	first := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "before the apps opened")
	_ = ra.Close() // the publisher leaves: only the three clients stay

	// NDK and welshman: their first reads, then idle until told.
	ctx, cancel := context.WithTimeout(context.Background(), idle+5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "idle.mjs", r.WSURL, ch)
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
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case l, ok := <-lines:
		if !ok || !strings.Contains(l, `"ready"`) {
			t.Fatalf("NDK and welshman did not get idle: %q (stderr %s)", l, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("NDK and welshman not idle within 2 minutes (stderr %s)", stderr.String())
	}

	// The Buzz desktop app: its start, then idle on a goroutine.
	app, live, opened := openBuzzSession(t, r, ch, first.ID)
	before := settledStatements(t, r)
	v.open.Store(true)
	start := time.Now()
	type buzzIdle struct {
		frames int
		err    error
	}
	buzz := make(chan buzzIdle, 1)
	go func() {
		n, err := app.idle(idle, buzzStallTimeout, opened)
		buzz <- buzzIdle{n, err}
	}()
	b := <-buzz
	v.open.Store(false)
	statements := r.App.Store.Statements() - before
	elapsed := time.Since(start)
	if _, err := io.WriteString(stdin, "end\n"); err != nil {
		t.Fatal(err)
	}

	// After the idle minutes: a new message, live on each client.
	rl := dial(t, r)
	login(t, rl, alice)
	msg := publish(t, rl, alice, 9, nostr.Tags{{"h", ch}}, "after the idle minutes")
	var got idleReport
	var last string
	for l := range lines {
		last = l
	}
	if err := json.Unmarshal([]byte(last), &got); err != nil {
		t.Fatalf("idle.mjs printed %q: %v (stderr %s)", last, err, stderr.String())
	}

	// What the idle minutes cost.
	t.Logf("idle for %s: %d database statements, %d $connect; Buzz desktop: %d liveness frames, longest silence %s",
		elapsed.Round(time.Second), statements, v.connect.Load(), b.frames, app.maxGap().Round(time.Millisecond))
	for name, l := range got.Libs {
		t.Logf("%s: %d sockets opened, %d closed, %d frames received (%d liveness), %d sent while idle", name, l.Opens, l.Closes, l.Received, l.Liveness, len(l.Sent))
		for _, s := range l.Sent {
			t.Logf("  %s sent at +%s: %s", name, (time.Duration(s.T) * time.Millisecond).Round(time.Second), s.Frame)
		}
	}
	if statements != 0 {
		v.mu.Lock()
		keys := make([]string, 0, len(v.byBody))
		for k := range v.byBody {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var what []string
		for _, k := range keys {
			what = append(what, fmt.Sprintf("%d statements: %s", v.byBody[k], k))
		}
		if outside := statements - v.ran; outside > 0 {
			what = append(what, fmt.Sprintf("%d statements outside any WebSocket invocation (the push function's ticks, HTTP routes)", outside))
		}
		v.mu.Unlock()
		t.Errorf("the idle clients' %s ran %d database statements (Aurora would not pause):\n  %s", elapsed.Round(time.Second), statements, strings.Join(what, "\n  "))
	}
	if n := v.connect.Load(); n != 0 {
		t.Errorf("%d $connect while idle: a client reconnected", n)
	}
	if b.err != nil {
		t.Errorf("Buzz desktop: %v", b.err)
	} else if err := app.expectLive(live, msg.ID); err != nil {
		t.Errorf("Buzz desktop: %v", err)
	}
	for _, e := range got.Effects {
		t.Errorf("idle.mjs: %s", e)
	}
	for _, name := range []string{"ndk", "welshman"} {
		l, ok := got.Libs[name]
		switch {
		case !ok:
			t.Errorf("%s: no report (stderr %s)", name, stderr.String())
			continue
		case l.Opens != 1 || l.Closes != 0:
			t.Errorf("%s opened %d sockets and closed %d: it reconnected", name, l.Opens, l.Closes)
		case l.SignIns != 1:
			t.Errorf("%s signed in %d times, want once", name, l.SignIns)
		case l.Liveness < int(idle/(lambdas.LivenessDelaySeconds*time.Second))/2:
			t.Errorf("%s saw %d liveness frames in %s", name, l.Liveness, idle)
		}
		for _, e := range l.Effects {
			t.Errorf("%s: %s", name, e)
		}
		if len(l.Events) != 1 || l.Events[0] != msg.ID {
			t.Errorf("%s: after idling got %v live, want %s", name, l.Events, msg.ID)
		}
	}
}

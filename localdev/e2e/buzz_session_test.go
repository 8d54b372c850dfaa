package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/wire"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// The Buzz desktop app's relay session, as its source plays it (block/buzz
// desktop/src/shared/api/relayClientSession.ts, timings in
// relayClientTimings.ts, filters in relayChannelFilters.ts and
// shared/constants/kinds.ts): read there, written here.
const (
	// buzzAuthTimeout is AUTH_TIMEOUT_MS: connect() sends nothing and
	// waits this long for the relay's ["AUTH", challenge], then resets.
	buzzAuthTimeout = 25 * time.Second
	// buzzStallTimeout is STALL_IDLE_TIMEOUT_MS: the stall watchdog
	// resets a connection with no inbound frame for this long.
	buzzStallTimeout = 60 * time.Second
)

var (
	// CHANNEL_TIMELINE_CONTENT_KINDS: the history fetch's kinds.
	buzzTimelineKinds = []int{9, 40002, 40008, 40099, 43001, 43002, 43003, 43004, 43005, 43006, 48100}
	// CHANNEL_EVENT_KINDS and 39005: subscribeToChannelLive's kinds.
	buzzLiveKinds = []int{5, 7, 9005, 9, 40002, 45001, 45003, 40001, 40003, 40008, 40099, 48100, 48101, 48102, 48103, 39005}
)

// buzzDesktop is one socket of the app: every inbound frame is recorded
// with its arrival (the stall watchdog's recordInbound).
type buzzDesktop struct {
	t      *testing.T
	c      *websocket.Conn
	url    string
	frames chan buzzFrame
	closed chan error

	opened time.Time // the upgrade completed
	key    user      // the key it AUTHed as
	// live is each live subscription it opened by id, with its filter
	// (what relayReconnectReplay.ts replays).
	live map[string]map[string]any

	mu   sync.Mutex
	last time.Time // the watchdog's last inbound frame
	gap  time.Duration

	received atomic.Int64 // every inbound frame
}

type buzzFrame struct {
	parts []json.RawMessage
	raw   string
}

func dialBuzz(t *testing.T, r *Relay) *buzzDesktop {
	t.Helper()
	c, _, err := websocket.Dial(ctxT(t), r.WSURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { c.CloseNow() })
	b := &buzzDesktop{t: t, c: c, url: r.WSURL, frames: make(chan buzzFrame, 256), closed: make(chan error, 1), last: time.Now(), opened: time.Now()}
	go func() {
		for {
			_, data, err := c.Read(context.Background())
			if err != nil {
				b.closed <- err
				close(b.frames)
				return
			}
			b.received.Add(1)
			now := time.Now()
			b.mu.Lock()
			b.gap = max(b.gap, now.Sub(b.last))
			b.last = now
			b.mu.Unlock()
			var parts []json.RawMessage
			if json.Unmarshal(data, &parts) != nil || len(parts) == 0 {
				continue // the app drops what is not a JSON array
			}
			b.frames <- buzzFrame{parts: parts, raw: string(data)}
		}
	}()
	return b
}

// next is the next frame, failing after d.
func (b *buzzDesktop) next(d time.Duration, what string) buzzFrame {
	b.t.Helper()
	select {
	case f, ok := <-b.frames:
		if !ok {
			b.t.Fatalf("%s: the socket closed: %v", what, <-b.closed)
		}
		return f
	case <-time.After(d):
		b.t.Fatalf("%s: nothing within %s", what, d)
	}
	return buzzFrame{}
}

func (b *buzzDesktop) verb(f buzzFrame) string { return str(b.t, f.parts[0]) }

func (b *buzzDesktop) send(v any) {
	b.t.Helper()
	data, _ := json.Marshal(v)
	if err := b.c.Write(ctxT(b.t), websocket.MessageText, data); err != nil {
		b.t.Fatal(err)
	}
}

// connect is the app's connect(): nothing sent until the relay's
// challenge, answered with a kind 22242 naming it and the relay URL; the
// session is open on that event's OK true.
func (b *buzzDesktop) connect(u user) {
	b.key = u
	b.t.Helper()
	f := b.next(buzzAuthTimeout, "the app waits for the relay's AUTH challenge before sending anything")
	if b.verb(f) != "AUTH" || len(f.parts) != 2 {
		b.t.Fatalf("first frame %s, want [\"AUTH\", challenge]", f.raw)
	}
	b.t.Logf("the challenge arrived %s after the upgrade", time.Since(b.opened).Round(time.Millisecond))
	ev := signed(b.t, u, 22242, nostr.Tags{{"relay", b.url}, {"challenge", str(b.t, f.parts[1])}}, "")
	b.send([]any{"AUTH", ev})
	// A second challenge would make the app sign and send a second AUTH
	// (handleAuthChallenge, while its authRequest waits): the AUTH that
	// answers the pushed challenge gets its OK alone (the liveness frame,
	// which the app ignores, may come first when the AUTH's invocation
	// starts an instance: a cold start outlasts the tick here).
	f = b.next(wait, "OK of the AUTH")
	for f.raw == string(wire.Liveness) {
		f = b.next(wait, "OK of the AUTH")
	}
	if b.verb(f) != "OK" || str(b.t, f.parts[1]) != ev.ID || string(f.parts[2]) != "true" {
		b.t.Fatalf("AUTH answered %s, want OK true alone", f.raw)
	}
}

// req sends REQ id filter and returns the ids of the events before its
// EOSE.
func (b *buzzDesktop) req(id string, filter map[string]any) []string {
	b.t.Helper()
	b.send([]any{"REQ", id, filter})
	var ids []string
	for {
		f := b.next(wait, "REQ "+id)
		switch b.verb(f) {
		case "EVENT":
			var ev nostr.Event
			if err := json.Unmarshal(f.parts[2], &ev); err != nil {
				b.t.Fatal(err)
			}
			ids = append(ids, ev.ID)
		case "EOSE":
			if str(b.t, f.parts[1]) == id {
				return ids
			}
		default:
			b.t.Fatalf("REQ %s %v answered %s", id, filter, f.raw)
		}
	}
}

// maxGap is the longest silence the watchdog saw so far, the one running
// now included.
func (b *buzzDesktop) maxGap() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.gap, time.Since(b.last))
}

// TestBuzzDesktopSessionOpensAndStaysOpenWithoutSpeakingFirst plays the
// Buzz desktop app's session: it connects and sends nothing until the
// relay's ["AUTH", challenge] (pushed as the socket opens: within the
// app's 25 s, or it resets and reconnects), answers with a kind 22242 and
// gets OK true; reads a channel's history the app's way (the timeline
// kinds, limit 50, CLOSE at EOSE) and holds its three live subscriptions
// (channel rows and aux with 39005 since now, huddle lifecycle, typing);
// then idles with them open: a frame reaches it before its stall
// watchdog would reset the connection, each idle frame is the liveness
// frame, an EOSE for a subscription the app never opened (handleEose finds
// none and does nothing), no idle frame runs a database statement, and
// the same socket still delivers a new message live afterwards.
//
// The liveness tick runs every second here (emulator.Stack.Liveness; AWS
// runs it every 30 s) and the watchdog's limit is scaled from the app's 60
// s to 6 s, a generous bound for a loaded machine.
// BUZZ_E2E_REAL_LIVENESS=1 runs it at the real scale: the 30 s tick, the
// app's 60 s limit and 3 minutes idle. At that scale the suite plays the
// same session for more than 5 minutes in
// TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements (idle_clients_test.go),
// beside NDK and welshman: authenticated, never 60 s without a frame, no
// reconnect, no database statement, live delivery afterwards.
func TestBuzzDesktopSessionOpensAndStaysOpenWithoutSpeakingFirst(t *testing.T) {
	period, stall, idle := time.Second, 6*time.Second, 8*time.Second
	if os.Getenv("BUZZ_E2E_REAL_LIVENESS") == "1" {
		period, stall, idle = lambdas.LivenessDelaySeconds*time.Second, buzzStallTimeout, 3*time.Minute
	}
	r := StartTest(t, Options{LivenessPeriod: period})
	alice, ra := loggedIn(t, r)
	ch := createChannel(t, ra, alice, "open")
	first := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "before the app opened")
	app, live, opened := openBuzzSession(t, r, ch, first.ID)

	// Idle, with the live subscriptions open.
	var before int64
	counted := r.Functions == nil // processes mode: the functions' own pools serve
	if counted {
		// The app's CLOSE of its history gets no answer: what it costs
		// (its subscription's row deleted) may still be under way when the
		// last REQ's EOSE arrives. Idle starts once the statements of what
		// was sent before it have settled.
		before = settledStatements(t, r)
	}
	frames, err := app.idle(idle, stall, opened)
	if err != nil {
		t.Fatal(err)
	}
	if frames < int(idle/period)/2 {
		t.Fatalf("%d liveness frames in %s idle with a %s tick", frames, idle, period)
	}
	if counted {
		if n := r.App.Store.Statements() - before; n != 0 {
			t.Fatalf("the idle session ran %d database statements", n)
		}
	}
	t.Logf("%d liveness frames in %s, longest silence %s", frames, idle, app.maxGap().Round(time.Millisecond))

	// Still the same session: a new message arrives live.
	msg := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "after the idle minutes")
	if err := app.expectLive(live, msg.ID); err != nil {
		t.Fatal(err)
	}
}

// openBuzzSession plays the app's start on channel ch: connect (nothing
// sent before the relay's challenge, then AUTH), the channel's history
// the app's way (the timeline kinds, limit 50, CLOSE at EOSE), which must
// hold the event first, and its three live subscriptions (channel rows
// and aux with 39005 since now, huddle lifecycle, typing). It returns the
// app, the live subscription's id and every subscription id it opened.
func openBuzzSession(t *testing.T, r *Relay, ch, first string) (app *buzzDesktop, live string, opened []string) {
	t.Helper()
	app = dialBuzz(t, r)
	app.connect(testkit.NewKey(t))
	history := "history-" + uuid.NewString()
	if ids := app.req(history, map[string]any{"kinds": buzzTimelineKinds, "#h": []string{ch}, "limit": 50}); !slices.Contains(ids, first) {
		t.Fatalf("channel history %v, want %s", ids, first)
	}
	app.send([]any{"CLOSE", history}) // handleSubscriptionEose closes a history subscription
	now := time.Now().Unix()
	live = "live-" + uuid.NewString()
	opened = []string{history, live}
	first5 := map[string]any{"kinds": buzzLiveKinds, "#h": []string{ch}, "limit": 1000, "since": now}
	app.live = map[string]map[string]any{live: first5}
	app.req(live, first5)
	for _, f := range []map[string]any{
		{"kinds": []int{48100, 48101, 48102, 48103}, "#h": []string{ch}, "limit": 100},
		{"kinds": []int{20002}, "#h": []string{ch}, "limit": 10, "since": now - 10},
	} {
		id := "live-" + uuid.NewString()
		opened = append(opened, id)
		app.live[id] = f
		app.req(id, f)
	}
	return app, live, opened
}

// idle keeps the app idle for d with its subscriptions (opened) open, as
// its stall watchdog sees it: it fails when the socket closes, when a
// frame other than the liveness frame arrives (an EOSE for a subscription
// the app never opened: handleEose finds none and does nothing), or when
// no frame arrives for longer than stall (the watchdog would reset the
// connection). It answers the liveness frames seen. Safe to run on a
// goroutine of its own (it fails by its error, not the test).
func (b *buzzDesktop) idle(d, stall time.Duration, opened []string) (int, error) {
	b.mu.Lock()
	b.gap, b.last = 0, time.Now()
	b.mu.Unlock()
	end := time.Now().Add(d)
	frames := 0
	for time.Now().Before(end) {
		select {
		case f, ok := <-b.frames:
			if !ok {
				return frames, fmt.Errorf("the socket closed while idle: %v", <-b.closed)
			}
			var sub string
			if len(f.parts) > 1 {
				_ = json.Unmarshal(f.parts[1], &sub)
			}
			if f.raw != string(wire.Liveness) || slices.Contains(opened, sub) {
				return frames, fmt.Errorf("while idle: %s, want the liveness frame %s for a subscription the app never opened", f.raw, wire.Liveness)
			}
			frames++
		case <-time.After(min(time.Until(end), time.Second)):
		}
		if g := b.maxGap(); g > stall {
			return frames, fmt.Errorf("no frame for %s while idle: the app's stall watchdog (%s here) resets the connection", g.Round(time.Millisecond), stall)
		}
	}
	return frames, nil
}

// expectLive waits for event id on subscription live, skipping liveness
// frames.
func (b *buzzDesktop) expectLive(live, id string) error {
	for deadline := time.After(wait); ; {
		select {
		case f, ok := <-b.frames:
			if !ok {
				return fmt.Errorf("the socket closed before the live message: %v", <-b.closed)
			}
			if f.raw == string(wire.Liveness) {
				continue
			}
			var sub string
			var ev nostr.Event
			if len(f.parts) != 3 || json.Unmarshal(f.parts[0], &sub) != nil || sub != "EVENT" ||
				json.Unmarshal(f.parts[1], &sub) != nil || sub != live || json.Unmarshal(f.parts[2], &ev) != nil || ev.ID != id {
				return fmt.Errorf("after idling: %s, want the new message %s on %s", f.raw, id, live)
			}
			return nil
		case <-deadline:
			return fmt.Errorf("the live message %s did not arrive within %s", id, wait)
		}
	}
}

// settledStatements is the store's statement count once it has not moved
// for half a second (at most 10 s): the statements of messages sent before
// are done.
func settledStatements(t *testing.T, r *Relay) int64 {
	t.Helper()
	n := r.App.Store.Statements()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		m := r.App.Store.Statements()
		if m == n {
			return n
		}
		n = m
	}
	t.Fatalf("the store's statements never settled before the idle minutes")
	return n
}

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

const wait = 10 * time.Second

func newRelay(t *testing.T) *Relay { return StartTest(t, Options{}) }

// user is a client identity.
type user = testkit.Key

// signed is an event of u created now, as go-nostr publishes it.
func signed(t *testing.T, u user, kind int, tags nostr.Tags, content string) nostr.Event {
	t.Helper()
	return *u.Event(t, kind, content, tags...)
}

// signedAt is signed with a chosen created_at.
func signedAt(t *testing.T, u user, at nostr.Timestamp, kind int, tags nostr.Tags, content string) nostr.Event {
	t.Helper()
	return *u.EventAt(t, at.Time(), kind, content, tags...)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// dial connects go-nostr's relay client.
func dial(t *testing.T, r *Relay) *nostr.Relay {
	t.Helper()
	rl, err := nostr.RelayConnect(context.Background(), r.WSURL)
	if err != nil {
		t.Fatalf("connect %s: %v", r.WSURL, err)
	}
	t.Cleanup(func() { _ = rl.Close() })
	return rl
}

// loggedIn is a new key with its own authenticated go-nostr connection.
func loggedIn(t *testing.T, r *Relay) (user, *nostr.Relay) {
	t.Helper()
	u := testkit.NewKey(t)
	rl := dial(t, r)
	login(t, rl, u)
	return u, rl
}

// login triggers the challenge (the relay sends it with the reply to the
// first message) and answers it with relay.Auth.
func login(t *testing.T, rl *nostr.Relay, u user) {
	t.Helper()
	ctx := ctxT(t)
	sub, err := rl.Subscribe(ctx, nostr.Filters{{Kinds: []int{1}, Limit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case reason := <-sub.ClosedReason:
		if !strings.HasPrefix(reason, "auth-required:") {
			t.Fatalf("REQ before AUTH closed with %q, want auth-required:", reason)
		}
	case <-ctx.Done():
		t.Fatal("no CLOSED auth-required: before AUTH")
	}
	if err := rl.Auth(ctx, u.Sign); err != nil {
		t.Fatalf("AUTH: %v", err)
	}
}

func publish(t *testing.T, rl *nostr.Relay, u user, kind int, tags nostr.Tags, content string) nostr.Event {
	t.Helper()
	ev := signed(t, u, kind, tags, content)
	if err := rl.Publish(ctxT(t), ev); err != nil {
		t.Fatalf("publish kind %d: %v", kind, err)
	}
	return ev
}

// createChannelID is a new channel id: a UUID, as Buzz clients make them,
// or with BUZZ_E2E_GROUP_IDS=nip29 a NIP-29 id as generic clients make them
// (mixed-case letters, digits, - and _), so every Buzz behaviour the suite
// checks can be run for non-UUID groups too (issue 28).
func createChannelID() string {
	if os.Getenv("BUZZ_E2E_GROUP_IDS") == "nip29" {
		return nip29GroupID()
	}
	return uuid.NewString()
}

// nip29GroupID is a random id in the form generic NIP-29 clients send.
func nip29GroupID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "Gx" + string(b)
}

func createChannel(t *testing.T, rl *nostr.Relay, u user, visibility string) string {
	t.Helper()
	id := createChannelID()
	publish(t, rl, u, 9007, nostr.Tags{{"h", id}, {"name", "ch-" + id[:8]}, {"visibility", visibility}}, "")
	return id
}

// next returns the next event of sub, failing after the wait.
func next(t *testing.T, sub *nostr.Subscription) *nostr.Event {
	t.Helper()
	select {
	case ev := <-sub.Events:
		return ev
	case reason := <-sub.ClosedReason:
		t.Fatalf("subscription closed: %s", reason)
	case <-time.After(wait):
		t.Fatal("no event arrived")
	}
	return nil
}

func eose(t *testing.T, sub *nostr.Subscription) {
	t.Helper()
	select {
	case <-sub.EndOfStoredEvents:
	case reason := <-sub.ClosedReason:
		t.Fatalf("subscription closed before EOSE: %s", reason)
	case <-time.After(wait):
		t.Fatal("no EOSE")
	}
}

// rawConn is a bare WebSocket client for what libraries will not send.
type rawConn struct {
	t *testing.T
	c *websocket.Conn
	// challenge is the connection's NIP-42 challenge, as the relay pushed
	// it when the connection opened.
	challenge string
}

// dialRaw connects and reads the relay's first frame, the NIP-42 challenge
// it pushes as the connection opens (ws-push's greeting), before the client
// has said anything. The relay sends the same challenge again in reply to
// a first message that finds the connection unauthenticated: read skips
// that repeat, and expect("AUTH") answers the challenge without reading.
func dialRaw(t *testing.T, r *Relay) *rawConn {
	t.Helper()
	c, _, err := websocket.Dial(ctxT(t), r.WSURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { c.CloseNow() })
	rc := &rawConn{t: t, c: c}
	greeting := rc.read()
	if str(t, greeting[0]) != "AUTH" || len(greeting) != 2 {
		t.Fatalf("first frame of a new connection: %s, want the AUTH challenge pushed at connect", joinRaw(greeting))
	}
	return rc
}

func (rc *rawConn) send(msg string) {
	rc.t.Helper()
	if err := rc.c.Write(ctxT(rc.t), websocket.MessageText, []byte(msg)); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

func (rc *rawConn) sendJSON(v any) {
	rc.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		rc.t.Fatal(err)
	}
	rc.send(string(b))
}

// read returns the next message as its array parts. The first AUTH sets
// the connection's challenge; an AUTH repeating it is skipped (one that
// names another challenge is returned, and fails the test that does not
// expect it).
func (rc *rawConn) read() []json.RawMessage {
	rc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for {
		_, data, err := rc.c.Read(ctx)
		if err != nil {
			rc.t.Fatalf("read: %v", err)
		}
		var parts []json.RawMessage
		if err := json.Unmarshal(data, &parts); err != nil || len(parts) == 0 {
			rc.t.Fatalf("relay sent a non-array message %q", data)
		}
		if !rc.repeatedChallenge(parts) {
			return parts
		}
	}
}

// repeatedChallenge reports whether parts is an AUTH repeating the
// connection's challenge; the first AUTH read sets it.
func (rc *rawConn) repeatedChallenge(parts []json.RawMessage) bool {
	var verb, challenge string
	if len(parts) != 2 || json.Unmarshal(parts[0], &verb) != nil || verb != "AUTH" || json.Unmarshal(parts[1], &challenge) != nil {
		return false
	}
	if rc.challenge == "" {
		rc.challenge = challenge
		return false
	}
	return challenge == rc.challenge
}

func str(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("want a string, got %s", raw)
	}
	return s
}

// expect reads one message and checks its verb; expect("AUTH") answers the
// challenge the connection already has without reading (dialRaw read it).
func (rc *rawConn) expect(verb string) []json.RawMessage {
	rc.t.Helper()
	if verb == "AUTH" && rc.challenge != "" {
		b, _ := json.Marshal(rc.challenge)
		return []json.RawMessage{json.RawMessage(`"AUTH"`), b}
	}
	parts := rc.read()
	if got := str(rc.t, parts[0]); got != verb {
		rc.t.Fatalf("want %s, got %s", verb, joinRaw(parts))
	}
	return parts
}

// auth answers the challenge of the AUTH message parts as u.
func (rc *rawConn) auth(r *Relay, u user, challenge string) {
	rc.t.Helper()
	ev := signed(rc.t, u, 22242, nostr.Tags{{"relay", r.WSURL}, {"challenge", challenge}}, "")
	rc.sendJSON([]any{"AUTH", ev})
	ok := rc.expect("OK")
	if string(ok[2]) != "true" {
		rc.t.Fatalf("AUTH refused: %s", joinRaw(ok))
	}
}

func joinRaw(parts []json.RawMessage) string {
	b, _ := json.Marshal(parts)
	return string(b)
}

func urlPathEscape(s string) string { return url.PathEscape(s) }

// closedReason waits for the CLOSED of sub; an event before it fails.
func closedReason(t *testing.T, sub *nostr.Subscription) string {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case reason := <-sub.ClosedReason:
			return reason
		case ev := <-sub.Events:
			if ev != nil {
				t.Fatalf("got event %q instead of CLOSED", ev.Content)
			}
		case <-deadline:
			t.Fatal("subscription was not closed")
		}
	}
}

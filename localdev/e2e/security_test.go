package e2e

// Adversarial tests of issue 11 through the public contract: the HTTP
// bridge (NIP-98) and the WebSocket relay, over the emulator and real
// Postgres. docs/security.md lists what each one shows.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// send posts body (JSON as text: some tests send what a map cannot hold)
// to path as u, with a fresh NIP-98 token.
func (r *Relay) send(t *testing.T, u user, path, body string) (int, []byte) {
	t.Helper()
	return newBridge(t, r, u).post(path, []byte(body))
}

// callWith posts body to url with the Authorization value auth.
func (r *Relay) callWith(t *testing.T, url, auth string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// query runs POST /query with filters and returns the events; any status
// but 200 fails.
func (r *Relay) query(t *testing.T, u user, filters string) []nostr.Event {
	t.Helper()
	code, body := r.send(t, u, "/query", filters)
	if code != http.StatusOK {
		t.Fatalf("query %s: %d %s", filters, code, body)
	}
	var evs []nostr.Event
	if err := json.Unmarshal(body, &evs); err != nil {
		t.Fatalf("query %s: %v", filters, err)
	}
	return evs
}

func (r *Relay) count(t *testing.T, u user, filters string) int {
	t.Helper()
	code, body := r.send(t, u, "/count", filters)
	if code != http.StatusOK {
		t.Fatalf("count %s: %d %s", filters, code, body)
	}
	var c struct{ Count int }
	_ = json.Unmarshal(body, &c)
	return c.Count
}

// submit posts ev to /events as u and returns the refusal ("" = stored).
func (r *Relay) submit(t *testing.T, u user, ev nostr.Event) string {
	t.Helper()
	return newBridge(t, r, u).submit(ev).Message
}

// twoUsers starts a relay with two users, each logged in on a connection.
func twoUsers(t *testing.T) (r *Relay, alice, bob user, ra, rb *nostr.Relay) {
	t.Helper()
	r = newRelay(t)
	alice, bob = testkit.NewKey(t), testkit.NewKey(t)
	ra, rb = dial(t, r), dial(t, r)
	login(t, ra, alice)
	login(t, rb, bob)
	return r, alice, bob, ra, rb
}

// TestAddressDeletionStaysInChannel (item 1): a kind 5 deleting an
// addressable event of a private channel by its a tag is stored in that
// channel, so an outsider reads nothing of it on any path.
func TestAddressDeletionStaysInChannel(t *testing.T) {
	r, alice, bob, ra, rb := twoUsers(t)
	ch := createChannel(t, ra, alice, "private")
	publish(t, ra, alice, 30023, nostr.Tags{{"h", ch}, {"d", "secret-plan"}}, "article")
	del := publish(t, ra, alice, 5, nostr.Tags{{"a", "30023:" + alice.Pub + ":secret-plan"}}, "")

	for _, f := range []string{`[{"kinds":[5]}]`, `[{"authors":["` + alice.Pub + `"]}]`, `[{"ids":["` + del.ID + `"]}]`} {
		if evs := r.query(t, bob, f); hasID(evs, del.ID) {
			t.Fatalf("outsider read the deletion with %s", f)
		}
		if n := r.count(t, bob, f); n != 0 {
			t.Fatalf("outsider COUNT %s = %d", f, n)
		}
	}
	sub, err := rb.Subscribe(ctxT(t), nostr.Filters{{Kinds: []int{5}}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-sub.Events:
		t.Fatalf("outsider REQ got %s", ev.ID)
	case <-sub.EndOfStoredEvents:
	}
	if evs := r.query(t, alice, `[{"kinds":[5],"#h":["`+ch+`"]}]`); !hasID(evs, del.ID) {
		t.Fatal("the member does not read the deletion in its channel")
	}
}

// TestAuxClosureOnlyTargets (item 2): an outsider's reaction or edit aimed at
// an open-channel event but also tagging a private message is not part of
// the private channel's window or thread aux.
func TestAuxClosureOnlyTargets(t *testing.T) {
	r, alice, bob, ra, rb := twoUsers(t)
	priv := createChannel(t, ra, alice, "private")
	open := createChannel(t, rb, bob, "open")
	secret := publish(t, ra, alice, 9, nostr.Tags{{"h", priv}}, "secret")
	reply := publish(t, ra, alice, 9, nostr.Tags{{"h", priv}, {"e", secret.ID, "", "root"}, {"e", secret.ID, "", "reply"}}, "secret reply")
	mine := publish(t, rb, bob, 9, nostr.Tags{{"h", open}}, "bob's")
	ownReact := publish(t, ra, alice, 7, nostr.Tags{{"e", secret.ID}}, "+")

	injected := []nostr.Event{
		publish(t, rb, bob, 7, nostr.Tags{{"e", secret.ID}, {"e", reply.ID}, {"e", mine.ID}}, "+"),
		publish(t, rb, bob, 40003, nostr.Tags{{"e", mine.ID}, {"e", secret.ID}, {"e", reply.ID}}, "edited"),
	}
	window := r.query(t, alice, `[{"#h":["`+priv+`"],"top_level":true,"include_aux":true,"limit":5}]`)
	thread := r.query(t, alice, `[{"#e":["`+secret.ID+`"],"depth_limit":3,"include_aux":true}]`)
	if !hasID(window, ownReact.ID) {
		t.Fatal("the window aux lost the member's own reaction")
	}
	for _, ev := range injected {
		if hasID(window, ev.ID) || hasID(thread, ev.ID) {
			t.Fatalf("outsider's kind %d was injected into the private channel's aux", ev.Kind)
		}
	}
}

// TestWriteRefusalsAreNoOracle (item 4): every write an outsider aims at a
// private and hidden channel or one of its events is refused exactly as the
// same write aimed at a random id, and no refusal names the channel.
// (Issue 28: NIP-29's hidden flag is what hides a group's existence; a
// private group that is not hidden shows its metadata, so it was made hidden
// here, where before every private channel was.)
func TestWriteRefusalsAreNoOracle(t *testing.T) {
	r, alice, bob, ra, _ := twoUsers(t)
	priv := createChannelID()
	publish(t, ra, alice, 9007, nostr.Tags{{"h", priv}, {"name", "hidden"}, {"visibility", "private"},
		{"private"}, {"restricted"}, {"closed"}, {"hidden"}}, "")
	secret := publish(t, ra, alice, 9, nostr.Tags{{"h", priv}}, "secret")
	randomCh, randomEv := createChannelID(), strings.Repeat("ab", 32)

	cases := map[string]func(ch, ev string) nostr.Event{
		"post":     func(ch, _ string) nostr.Event { return signed(t, bob, 9, nostr.Tags{{"h", ch}}, "x") },
		"join":     func(ch, _ string) nostr.Event { return signed(t, bob, 9021, nostr.Tags{{"h", ch}}, "") },
		"leave":    func(ch, _ string) nostr.Event { return signed(t, bob, 9022, nostr.Tags{{"h", ch}}, "") },
		"9005":     func(ch, ev string) nostr.Event { return signed(t, bob, 9005, nostr.Tags{{"h", ch}, {"e", ev}}, "") },
		"kind 5":   func(_, ev string) nostr.Event { return signed(t, bob, 5, nostr.Tags{{"e", ev}}, "") },
		"reaction": func(_, ev string) nostr.Event { return signed(t, bob, 7, nostr.Tags{{"e", ev}}, "+") },
		"edit":     func(_, ev string) nostr.Event { return signed(t, bob, 40003, nostr.Tags{{"e", ev}}, "mine") },
		"reply": func(ch, ev string) nostr.Event {
			return signed(t, bob, 9, nostr.Tags{{"h", ch}, {"e", ev, "", "reply"}}, "x")
		},
		"put-user":     func(ch, _ string) nostr.Event { return signed(t, bob, 9000, nostr.Tags{{"h", ch}, {"p", bob.Pub}}, "") },
		"edit channel": func(ch, _ string) nostr.Event { return signed(t, bob, 9002, nostr.Tags{{"h", ch}, {"name", "x"}}, "") },
	}
	for name, mk := range cases {
		real := r.submit(t, bob, mk(priv, secret.ID))
		fake := r.submit(t, bob, mk(randomCh, randomEv))
		norm := func(s, ch, ev string) string {
			return strings.NewReplacer(ch, "<channel>", ev, "<event>").Replace(s)
		}
		if norm(real, priv, secret.ID) != norm(fake, randomCh, randomEv) {
			t.Errorf("%s: private target answers %q, random id %q", name, real, fake)
		}
		if real == "" {
			t.Errorf("%s: accepted", name)
		}
		if name == "reaction" || name == "edit" || name == "kind 5" {
			if strings.Contains(real, priv) {
				t.Errorf("%s: refusal names the private channel: %q", name, real)
			}
		}
	}
}

// TestThreadPanelSystemChannelOnlyWhenNamed (item 5): the thread panel
// serves a system channel's replies only to a filter naming it with #h.
func TestThreadPanelSystemChannelOnlyWhenNamed(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	ra := dial(t, r)
	login(t, ra, alice)
	sys := createChannelOfType(t, ra, alice, "system")
	root := publish(t, ra, alice, 9, nostr.Tags{{"h", sys}}, "root")
	rep := publish(t, ra, alice, 9, nostr.Tags{{"h", sys}, {"e", root.ID, "", "root"}, {"e", root.ID, "", "reply"}}, "reply")

	unnamed := `[{"#e":["` + root.ID + `"],"depth_limit":3}]`
	if evs := r.query(t, alice, unnamed); hasID(evs, rep.ID) {
		t.Fatal("a thread panel without #h served a system channel's reply")
	}
	if n := r.count(t, alice, unnamed); n != 0 {
		t.Fatalf("COUNT without #h = %d", n)
	}
	named := `[{"#e":["` + root.ID + `"],"#h":["` + sys + `"],"depth_limit":3}]`
	if evs := r.query(t, alice, named); !hasID(evs, rep.ID) {
		t.Fatal("the thread panel naming the system channel lost its reply")
	}
}

// TestRelaySignedEventsAreNotDeletable (item 6): an owner's 9005 cannot
// delete the relay-signed channel state or membership notices.
func TestRelaySignedEventsAreNotDeletable(t *testing.T) {
	r, alice, bob, ra, _ := twoUsers(t)
	ch := createChannel(t, ra, alice, "open")
	publish(t, ra, alice, 9000, nostr.Tags{{"h", ch}, {"p", bob.Pub}}, "")
	state := r.query(t, alice, `[{"kinds":[39000,39001,39002],"#h":["`+ch+`"]}]`)
	state = append(state, r.query(t, bob, `[{"kinds":[44100],"#h":["`+ch+`"]}]`)...)
	if len(state) != 4 {
		t.Fatalf("want 39000, 39001, 39002 and 44100, got %d events", len(state))
	}
	for _, ev := range state {
		if msg := r.submit(t, alice, signed(t, alice, 9005, nostr.Tags{{"h", ch}, {"e", ev.ID}}, "")); !strings.HasPrefix(msg, "restricted:") {
			t.Errorf("9005 of relay-signed kind %d: %q", ev.Kind, msg)
		}
	}
	if evs := r.query(t, bob, `[{"kinds":[39000],"#d":["`+ch+`"]}]`); len(evs) != 1 {
		t.Fatalf("the channel dropped out of discovery: %d heads", len(evs))
	}
}

// TestBadTextIsInvalid (items 9, 10): NUL anywhere and invalid UTF-8 get
// invalid: (HTTP 400 for a body, OK false / CLOSED over WebSocket), never
// 503 or error:.
func TestBadTextIsInvalid(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	ra := dial(t, r)
	login(t, ra, alice)
	ch := createChannel(t, ra, alice, "open")

	events := map[string]nostr.Event{
		"NUL in content":  signed(t, alice, 9, nostr.Tags{{"h", ch}}, "a\u0000b"),
		"NUL in a tag":    signed(t, alice, 9, nostr.Tags{{"h", ch}, {"t", "x\u0000"}}, "x"),
		"NUL in tag name": signed(t, alice, 9, nostr.Tags{{"h", ch}, {"\u0000", "x"}}, "x"),
		"NUL in a name":   signed(t, alice, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "n\u0000"}}, ""),
	}
	for name, ev := range events {
		if msg := r.submit(t, alice, ev); !strings.HasPrefix(msg, "invalid:") {
			t.Errorf("HTTP %s: %q", name, msg)
		}
		if err := ra.Publish(ctxT(t), ev); err == nil || !strings.Contains(err.Error(), "invalid:") {
			t.Errorf("WebSocket %s: %v", name, err)
		}
	}
	for _, f := range []string{`[{"#t":["a\u0000"]}]`, `[{"search":"a\u0000"}]`} {
		if code, body := r.send(t, alice, "/query", f); code != http.StatusBadRequest || !bytes.Contains(body, []byte("invalid:")) {
			t.Errorf("HTTP filter %s: %d %s", f, code, body)
		}
	}

	rc := authedRaw(t, r, alice)
	bad := "\xff\xfe"
	rc.send(`["REQ","nul",{"#t":["a\u0000"]}]`)
	if c := rc.expect("CLOSED"); !strings.HasPrefix(str(t, c[2]), "invalid:") {
		t.Errorf("REQ with NUL: %s", joinRaw(c))
	}
	rc.send(`["REQ","utf8",{"#t":["` + bad + `"]}]`)
	if c := rc.expect("CLOSED"); !strings.HasPrefix(str(t, c[2]), "invalid:") {
		t.Errorf("REQ with invalid UTF-8: %s", joinRaw(c))
	}
	ev := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "x")
	raw, _ := json.Marshal(ev)
	rc.send(`["EVENT",` + strings.Replace(string(raw), `"content":"x"`, `"content":"x`+bad+`"`, 1) + `]`)
	if ok := rc.expect("OK"); string(ok[2]) != "false" || !strings.HasPrefix(str(t, ok[3]), "invalid:") {
		t.Errorf("EVENT with invalid UTF-8: %s", joinRaw(ok))
	}
	if code, body := r.send(t, alice, "/query", `[{"#t":["`+bad+`"]}]`); code != http.StatusBadRequest || !bytes.Contains(body, []byte("invalid:")) {
		t.Errorf("HTTP filter with invalid UTF-8: %d %s", code, body)
	}
}

// TestBadFiltersAreInvalid (items 11, 12, 13, 15): an out-of-range
// depth_limit is clamped, long or many-term searches, quoted numbers and
// more filters than NIP-11 advertises get 400 invalid:, never 503.
func TestBadFiltersAreInvalid(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	root := strings.Repeat("ab", 32)
	if code, body := r.send(t, alice, "/query", `[{"#e":["`+root+`"],"depth_limit":9999999999}]`); code != http.StatusOK {
		t.Errorf("depth_limit 9999999999: %d %s", code, body)
	}
	eleven := "[" + strings.Repeat(`{"kinds":[1]},`, 10) + `{"kinds":[1]}]`
	bad := map[string]string{
		"long search":    `[{"search":"` + strings.Repeat("word ", 30000) + `"}]`,
		"search terms":   `[{"search":"a b c d e f g h i"}]`,
		"quoted limit":   `[{"limit":"10"}]`,
		"quoted kind":    `[{"kinds":["9"]}]`,
		"quoted since":   `[{"since":"10"}]`,
		"eleven filters": eleven,
	}
	for name, f := range bad {
		for _, path := range []string{"/query", "/count"} {
			if code, body := r.send(t, alice, path, f); code != http.StatusBadRequest || !bytes.HasPrefix(body, []byte(`{"error":"invalid:`)) {
				t.Errorf("%s %s: %d %.200s", path, name, code, body)
			}
		}
	}
	if code, body := r.send(t, alice, "/query", `[{"search":"hello world"}]`); code != http.StatusOK {
		t.Errorf("plain search: %d %s", code, body)
	}
	rc := authedRaw(t, r, alice)
	rc.send(`["REQ","s",{"search":"` + strings.Repeat("word ", 20000) + `"}]`)
	if c := rc.expect("CLOSED"); !strings.HasPrefix(str(t, c[2]), "invalid:") {
		t.Errorf("WebSocket long search: %.200s", joinRaw(c))
	}
}

// TestNIP98URLIsExact (item 17): a token's u names the query string too,
// and a u with user info or a fragment is refused.
func TestNIP98URLIsExact(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	body := []byte(`[{"kinds":[1]}]`)
	base := r.HTTPURL + "/query"
	cases := map[string]struct {
		url, signed string
		want        int
	}{
		"query string matches":   {base + "?x=1", base + "?x=1", http.StatusOK},
		"token without query":    {base + "?x=1", base, http.StatusUnauthorized},
		"token with extra query": {base, base + "?x=1", http.StatusUnauthorized},
		"fragment":               {base, base + "#frag", http.StatusUnauthorized},
		"user info":              {base, strings.Replace(base, "http://", "http://eve@", 1), http.StatusUnauthorized},
	}
	for name, c := range cases {
		if code, out := r.callWith(t, c.url, newBridge(t, r, alice).token(c.signed, body), body); code != c.want {
			t.Errorf("%s: %d %s", name, code, out)
		}
	}
}

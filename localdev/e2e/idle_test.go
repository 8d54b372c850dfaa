package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// idleRelay is a relay whose sessions live in the local DynamoDB
// (Options.Sessions), as make dev runs.
func idleRelay(t *testing.T) *Relay {
	t.Helper()
	return StartTest(t, Options{})
}

// connOf is u's connection, as the relay's sessions know it ("" if none).
func connOf(t *testing.T, r *Relay, u user) string {
	t.Helper()
	for _, id := range r.WS.Connections() {
		if s, err := r.App.Sessions.Get(ctxT(t), id); err == nil && s.Pubkey == u.Pub {
			return id
		}
	}
	return ""
}

// subsOf counts the live subscriptions of pubkey in the relay's default
// community that an event outside any channel reaches.
func subsOf(t *testing.T, r *Relay, pubkey string) int {
	t.Helper()
	subs, err := r.App.Sessions.AudienceRange(ctxT(t), session.AudienceRangeParams{Community: r.App.Config.DefaultCommunity, Channels: nil, Cutoff: 1 << 62, After: "", Through: "\U0010FFFF"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range subs {
		if s.Pubkey == pubkey {
			n++
		}
	}
	return n
}

// authRaw opens a raw connection as u the way a reconnecting client does:
// its first message a REQ (refused auth-required:; the challenge, pushed
// at connect, comes again with the refusal, the same string), then AUTH.
func authRaw(t *testing.T, r *Relay, u user) *rawConn {
	t.Helper()
	rc := dialRaw(t, r)
	rc.send(`["REQ","first",{"kinds":[9]}]`)
	if parts := rc.expect("CLOSED"); !strings.HasPrefix(str(t, parts[2]), "auth-required:") {
		t.Fatalf("REQ before AUTH: %s", joinRaw(parts))
	}
	rc.auth(r, u, rc.challenge)
	return rc
}

// reqAll sends a REQ and returns the ids of the events before its EOSE.
func (rc *rawConn) reqAll(sub string, filter map[string]any) []string {
	rc.t.Helper()
	ids, closed := rc.reqEvents(sub, filter)
	if closed {
		rc.t.Fatalf("REQ %s: CLOSED after %d events", sub, len(ids))
	}
	return ids
}

// reqEvents sends REQ sub with filter and returns the ids of the events
// before its EOSE, or whether it ended CLOSED instead.
func (rc *rawConn) reqEvents(sub string, filter map[string]any) (ids []string, closed bool) {
	rc.t.Helper()
	rc.sendJSON([]any{"REQ", sub, filter})
	for {
		parts := rc.read()
		switch str(rc.t, parts[0]) {
		case "EVENT":
			var ev nostr.Event
			if err := json.Unmarshal(parts[2], &ev); err != nil {
				rc.t.Fatal(err)
			}
			ids = append(ids, ev.ID)
		case "EOSE":
			return ids, false
		case "CLOSED":
			return ids, true
		default:
			rc.t.Fatalf("REQ %s: %s", sub, joinRaw(parts))
		}
	}
}

// eventually polls done until it holds, failing t with what after wait.
func eventually(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// reqAnswer sends a REQ and returns its answer: "EOSE" (no event may come
// first), or CLOSED's reason.
func (rc *rawConn) reqAnswer(sub string, filter map[string]any) string {
	rc.t.Helper()
	rc.sendJSON([]any{"REQ", sub, filter})
	return rc.answer(sub)
}

// answer reads the answer to REQ sub: "EOSE", or CLOSED's reason.
func (rc *rawConn) answer(sub string) string {
	rc.t.Helper()
	parts := rc.read()
	switch verb := str(rc.t, parts[0]); {
	case verb == "EOSE" && (sub == "" || str(rc.t, parts[1]) == sub):
		return "EOSE"
	case verb == "CLOSED" && len(parts) == 3 && (sub == "" || str(rc.t, parts[1]) == sub):
		return str(rc.t, parts[2])
	default:
		rc.t.Fatalf("REQ %s: %s", sub, joinRaw(parts))
		return ""
	}
}

// TestIdleREQFloodCannotStallAnotherKeysWrite: REQs answered from the
// last-commit mark (every since after the last event, no database) are
// stored in the session store. One key flooding them gets at most
// relayinfo.MaxSubscriptions per connection (then CLOSED restricted:, as
// on the database path) and relayinfo.MaxSubscriptionsPerKey across its
// connections (then CLOSED rate-limited:), sequentially or in one burst;
// another key's write is accepted (it reads none of them before its OK),
// and each stored one is a live subscription after it.
func TestIdleREQFloodCannotStallAnotherKeysWrite(t *testing.T) {
	r := idleRelay(t)
	alice, mallory, eve := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "open") // the community's first write: its mark
	// A since just after the last event.
	from := time.Now().Unix() + 1
	future := map[string]any{"kinds": []int{9}, "since": from}
	perConn, perKey := relayinfo.MaxSubscriptions, relayinfo.MaxSubscriptionsPerKey
	prefixOf := func(reason string) string { p, _, _ := strings.Cut(reason, ":"); return p }

	// Sequentially: each connection's first perConn answered, then
	// restricted:; once the key holds perKey, rate-limited:.
	conns := perKey/perConn + 2
	for i := range conns {
		rc := authRaw(t, r, mallory)
		for j := range perConn + 5 {
			sub := fmt.Sprintf("c%d-%d", i, j)
			got := rc.reqAnswer(sub, future)
			want := "EOSE"
			switch {
			case i >= perKey/perConn:
				want = "rate-limited"
			case j >= perConn:
				want = "restricted"
			}
			if got != want && prefixOf(got) != want {
				t.Fatalf("connection %d, REQ %d: %q, want %s", i, j, got, want)
			}
		}
	}
	// In one burst on one connection: never more than its limit answered.
	burst := authRaw(t, r, eve)
	const n = 300
	for j := range n {
		burst.sendJSON([]any{"REQ", fmt.Sprintf("b%d", j), future})
	}
	answered := 0
	for range n {
		switch got := burst.answer(""); {
		case got == "EOSE":
			answered++
		case prefixOf(got) != "restricted" && prefixOf(got) != "rate-limited":
			t.Fatalf("burst: %q", got)
		}
	}
	if answered == 0 || answered > perConn {
		t.Fatalf("a burst of %d REQs: %d answered, want 1 to %d", n, answered, perConn)
	}

	// What the store holds: the keys' limits, not their REQs.
	if got := subsOf(t, r, mallory.Pub); got != perKey {
		t.Fatalf("%d subscriptions of the flooding key stored, want its limit %d", got, perKey)
	}
	if got := subsOf(t, r, eve.Pub); got != answered {
		t.Fatalf("%d subscriptions of the bursting key stored, want the %d answered", got, answered)
	}
	for time.Now().Unix() <= from {
		time.Sleep(50 * time.Millisecond)
	}
	ba.accept(signed(t, alice, 9, nostr.Tags{{"h", ch}}, "another key's write"))
}

// TestIdleReconnectRunsNoStatement: with the sessions in DynamoDB, a
// $disconnect, and a reconnect (REQ before AUTH, AUTH, REQ with a since
// after the community's last commit, a limit-0 REQ, CLOSE) run no
// database statement, on the relay's own pool; the subscription so
// opened still gets the next commit live (fan-out reads it from the
// session store), a non-member's gets nothing of a private channel, and a
// REQ with an older since reads the stored events.
func TestIdleReconnectRunsNoStatement(t *testing.T) {
	skipStatementsInProcesses(t)
	r := idleRelay(t)
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "private")
	first := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "before the reconnect")
	ba.accept(first)

	// A first session resolves the host (the community registry caches
	// it), then goes away.
	old := authRaw(t, r, alice)
	oldID := connOf(t, r, alice)
	if ids := old.reqAll("warm", map[string]any{"kinds": []int{9}, "#h": []string{ch}}); len(ids) != 1 {
		t.Fatalf("stored events: %v", ids)
	}
	// A since after the last commit's mark: its second, or up to
	// ingest.RunAhead past it when the channel's relay-signed state was
	// dated ahead of the clock.
	m, err := r.App.Sessions.Mark(ctxT(t), r.App.Config.DefaultCommunity)
	if err != nil {
		t.Fatal(err)
	}
	for time.Now().Unix() <= m.Value {
		time.Sleep(100 * time.Millisecond)
	}
	before := r.App.Store.Statements()
	old.c.CloseNow()
	eventually(t, "the $disconnect did not forget the connection", func() bool {
		_, err := r.App.Sessions.Get(ctxT(t), oldID)
		return errors.Is(err, session.ErrUnknownConnection)
	})
	if n := r.App.Store.Statements() - before; n != 0 {
		t.Fatalf("$disconnect ran %d statements", n)
	}

	since := time.Now().Unix()
	ra := authRaw(t, r, alice)
	rb := authRaw(t, r, bob)
	live := map[string]any{"kinds": []int{9}, "#h": []string{ch}, "since": since}
	if ids := ra.reqAll("live", live); len(ids) != 0 {
		t.Fatalf("alice: events after the last commit: %v", ids)
	}
	if ids := rb.reqAll("live", live); len(ids) != 0 {
		t.Fatalf("bob: events after the last commit: %v", ids)
	}
	// NDK's keepalive: a limit-0 REQ, then its CLOSE.
	if ids := ra.reqAll("keepalive", map[string]any{"kinds": []int{1}, "limit": 0}); len(ids) != 0 {
		t.Fatalf("limit-0 REQ: %v", ids)
	}
	ra.sendJSON([]any{"CLOSE", "keepalive"})
	eventually(t, "the CLOSE did not end the subscription", func() bool {
		subs, err := r.App.Sessions.SubscriptionsByKey(ctxT(t), r.App.Config.DefaultCommunity, [][2]string{{connOf(t, r, alice), "keepalive"}})
		return err == nil && len(subs) == 0
	})
	if n := r.App.Store.Statements() - before; n != 0 {
		t.Fatalf("reconnect, AUTH, REQ since the last commit, a limit-0 REQ and CLOSE ran %d statements", n)
	}

	second := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "after the reconnect")
	ba.accept(second)
	got := ra.expect("EVENT")
	var ev nostr.Event
	if err := json.Unmarshal(got[2], &ev); err != nil || ev.ID != second.ID || str(t, got[1]) != "live" {
		t.Fatalf("live delivery: %s", joinRaw(got))
	}
	if r.App.Store.Statements() == before {
		t.Fatal("a commit ran no statement")
	}

	// Bob may not read the private channel: his subscription got nothing
	// (a REQ after it answers first if anything had been posted).
	if ids := rb.reqAll("probe", map[string]any{"kinds": []int{9}, "#h": []string{ch}}); len(ids) != 0 {
		t.Fatalf("bob read the private channel: %v", ids)
	}
	ids := ra.reqAll("older", map[string]any{"kinds": []int{9}, "#h": []string{ch}, "since": int64(first.CreatedAt) - 10})
	// Both, each once, before EOSE; their arrival order is not kept
	// (concurrent posts, docs/compatibility.md).
	slices.Sort(ids)
	want := []string{first.ID, second.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("REQ with an older since: %v, want %v", ids, want)
	}
}

// TestIdleStaleConnectionsSwept: a connection whose $disconnect never came
// (the relay crashed) is forgotten by the first delivery that finds it
// gone, one whose $disconnect came is forgotten by it, and an expired one
// is no delivery's audience.
func TestIdleStaleConnectionsSwept(t *testing.T) {
	r := idleRelay(t)
	alice, carol, dave := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "open")
	ctx := ctxT(t)
	subscribed := func(u user) (*rawConn, string) {
		rc := authRaw(t, r, u)
		rc.reqAll("all", map[string]any{"kinds": []int{9}, "#h": []string{ch}})
		return rc, connOf(t, r, u)
	}
	_, crashed := subscribed(carol)
	left, closed := subscribed(dave)
	if !r.WS.Forget(crashed) {
		t.Fatalf("emulator does not know %s", crashed)
	}
	left.c.CloseNow()
	gone := func(id string) bool {
		_, err := r.App.Sessions.Get(ctx, id)
		return errors.Is(err, session.ErrUnknownConnection)
	}
	eventually(t, "the $disconnect did not forget its connection", func() bool { return gone(closed) })
	if gone(crashed) {
		t.Fatal("a connection whose $disconnect never came was forgotten before any delivery")
	}
	// An expired connection with a subscription of the channel.
	// It expires two seconds on: one could turn before its subscription
	// is stored, which a connection past its expiry is refused.
	expired := session.Connection{ID: "expired", Community: r.App.Config.DefaultCommunity, Challenge: "x", Pubkey: carol.Pub,
		ConnectedAt: 1, ExpiresAt: time.Now().Unix() + 2}
	if _, err := r.App.Sessions.Open(ctx, expired); err != nil {
		t.Fatal(err)
	}
	if err := r.App.Sessions.Subscribe(ctx, expired.Community, "expired", "s", carol.Pub,
		[]nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {ch}}}}, sessions.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(expired.ExpiresAt, 100e6))) // past its expiry
	ba.accept(signed(t, alice, 9, nostr.Tags{{"h", ch}}, "to the stale"))
	eventually(t, "the crashed connection was not forgotten after a delivery found it gone", func() bool { return gone(crashed) })
	audience, err := r.App.Sessions.AudienceRange(ctx, session.AudienceRangeParams{Community: expired.Community, Channels: []string{ch}, Cutoff: 1 << 62, After: "", Through: "\U0010FFFF"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range audience {
		if s.Connection == "expired" || s.Connection == crashed || s.Connection == closed {
			t.Fatalf("a stale connection is in the audience: %+v", s)
		}
	}
}

// TestNewestREQFloodStoresOnlyWhatItAnswers: with the sessions in
// DynamoDB, a REQ for the newest stored events (no since: the database
// answers) writes its subscription alongside the limits' checks, in one
// round trip, and takes it back when they refuse. A key's REQs past its
// connection's limit are refused, sequentially (restricted:) or in one
// burst; the store then holds exactly the subscriptions answered EOSE,
// and the next event reaches each of those once and none of the refused
// ids.
func TestNewestREQFloodStoresOnlyWhatItAnswers(t *testing.T) {
	r := idleRelay(t)
	alice, mallory, eve := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "open")
	// No since, and nothing stored yet matches: the database answers EOSE.
	newest := map[string]any{"kinds": []int{9}, "authors": []string{alice.Pub}}
	perConn := relayinfo.MaxSubscriptions
	prefixOf := func(reason string) string { p, _, _ := strings.Cut(reason, ":"); return p }

	seq := authRaw(t, r, mallory)
	for j := range perConn + 3 {
		got, want := seq.reqAnswer(fmt.Sprintf("s%d", j), newest), "EOSE"
		if j >= perConn {
			want = "restricted"
		}
		if got != want && prefixOf(got) != want {
			t.Fatalf("REQ %d: %q, want %s", j, got, want)
		}
	}

	burst := authRaw(t, r, eve)
	const n = 200
	for j := range n {
		burst.sendJSON([]any{"REQ", fmt.Sprintf("b%d", j), newest})
	}
	answered, refused := map[string]bool{}, map[string]bool{}
	for len(answered)+len(refused) < n {
		parts := burst.read()
		verb, sub := str(t, parts[0]), str(t, parts[1])
		switch {
		case verb == "EOSE":
			answered[sub] = true
		case verb == "CLOSED" && (prefixOf(str(t, parts[2])) == "restricted" || prefixOf(str(t, parts[2])) == "rate-limited"):
			// (rate-limited: the key's set held, for a moment, the ids
			// its connection's set was refusing.)
			refused[sub] = true
		default:
			t.Fatalf("burst: %s", joinRaw(parts))
		}
	}
	if len(answered) == 0 || len(answered) > perConn {
		t.Fatalf("a burst of %d REQs: %d answered, want 1 to %d", n, len(answered), perConn)
	}
	if got := subsOf(t, r, mallory.Pub); got != perConn {
		t.Fatalf("%d subscriptions of the sequential key stored, want %d", got, perConn)
	}
	if got := subsOf(t, r, eve.Pub); got != len(answered) {
		t.Fatalf("%d subscriptions of the bursting key stored, want the %d answered", got, len(answered))
	}

	ev := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "the next event")
	ba.accept(ev)
	got := map[string]int{}
	for len(got) < len(answered) {
		parts := burst.read()
		if str(t, parts[0]) != "EVENT" {
			t.Fatalf("after the write: %s", joinRaw(parts))
		}
		got[str(t, parts[1])]++
	}
	for {
		parts, ok := burst.maybeRead(500 * time.Millisecond)
		if !ok {
			break
		}
		if str(t, parts[0]) != "EVENT" {
			t.Fatalf("after the write: %s", joinRaw(parts))
		}
		got[str(t, parts[1])]++
	}
	for sub, k := range got {
		if !answered[sub] || k != 1 {
			t.Fatalf("subscription %s got the event %d times (answered: %v)", sub, k, answered[sub])
		}
	}
	if len(got) != len(answered) {
		t.Fatalf("%d of the %d answered subscriptions got the event", len(got), len(answered))
	}
}

// TestCloseOnEOSELeavesNoSubscription: the one-shot read of nostr-tools'
// querySync and every "close on EOSE" client: REQ, then CLOSE as soon as
// EOSE arrives, fifty times on one connection, with the sessions in
// DynamoDB. Nothing stays stored, and the next event reaches none of
// them.
func TestCloseOnEOSELeavesNoSubscription(t *testing.T) {
	r := idleRelay(t)
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "open")
	rc := authRaw(t, r, bob)
	for i := range 50 {
		sub := fmt.Sprintf("q%d", i)
		f := map[string]any{"kinds": []int{9}, "authors": []string{alice.Pub}}
		if i%2 == 1 {
			f["since"] = time.Now().Unix() + 60 // answered from the mark
		}
		if got := rc.reqAnswer(sub, f); got != "EOSE" {
			t.Fatalf("REQ %s: %q", sub, got)
		}
		rc.sendJSON([]any{"CLOSE", sub})
	}
	eventually(t, "subscriptions left after their CLOSE", func() bool { return subsOf(t, r, bob.Pub) == 0 })
	ba.accept(signed(t, alice, 9, nostr.Tags{{"h", ch}}, "after the reads"))
	if parts, ok := rc.maybeRead(time.Second); ok {
		t.Fatalf("a closed subscription got %s", joinRaw(parts))
	}
}

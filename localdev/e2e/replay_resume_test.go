package e2e

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// advanceSessionsClock moves r's sessions' clock d ahead of the wall
// clock (on top of earlier moves): what a resume record compares passes
// without the test waiting for it.
func advanceSessionsClock(r *Relay, d time.Duration) {
	sessionsClock.Lock()
	_, set := sessionsClock.offset[r]
	sessionsClock.offset[r] += d
	sessionsClock.Unlock()
	if !set { // installed once; later moves only change the offset it reads
		r.App.Sessions.SetClock(func() time.Time {
			sessionsClock.Lock()
			defer sessionsClock.Unlock()
			return time.Now().Add(sessionsClock.offset[r])
		})
	}
}

var sessionsClock = struct {
	sync.Mutex
	offset map[*Relay]time.Duration
}{offset: map[*Relay]time.Duration{}}

// TestReconnectReplayNeverHidesAnEvent: a reconnecting client's replay of a
// live subscription that says what it holds (Buzz desktop's, with since =
// last seen - 5 s) is answered EOSE from its resume record, with no
// database statement, only while nothing was written in the community
// since the database answered it; the same id and filters with no since
// (welshman's resubscribe, or an app started afresh whose library numbers
// its subscriptions: nostr-tools' sub:1) go to the database; a post, a deletion and a member's
// removal between the disconnect and the replay each send the replay to
// the database, which answers what it must (the new event, not the
// deleted one, nothing for the removed member). The sessions' clock is
// moved past the settle (session.ResumeSettle) instead of waiting it.
func TestReconnectReplayNeverHidesAnEvent(t *testing.T) {
	skipStatementsInProcesses(t)
	r := idleRelay(t)
	settle := func() { advanceSessionsClock(r, time.Duration(session.ResumeSettle+1)*time.Second) }
	alice := testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "private")
	bob, _ := newMember(t, r, ba, ch)
	first := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "before the reconnect")
	ba.accept(first)
	live := map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 50}
	// sinceLastSeen is Buzz desktop's replay of live after seeing ev last.
	sinceLastSeen := func(ev nostr.Event) map[string]any {
		return map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 50, "since": int64(ev.CreatedAt) - session.ReplaySlack}
	}
	buzz := sinceLastSeen(first)

	// replay opens a new connection as bob and replays filter; it fails
	// unless the database was asked (ask) or not, and the answer is want.
	replay := func(what string, filter map[string]any, ask bool, want ...string) {
		t.Helper()
		rc := authRaw(t, r, bob)
		before := r.App.Store.Statements()
		ids, _ := rc.reqEvents("live", filter)
		slices.Sort(ids)
		n := r.App.Store.Statements() - before
		if (n > 0) != ask {
			t.Fatalf("%s: %d statements, want the database asked: %v", what, n, ask)
		}
		slices.Sort(want)
		if !slices.Equal(ids, want) && !(len(ids) == 0 && len(want) == 0) {
			t.Fatalf("%s: events %v, want %v", what, ids, want)
		}
		rc.c.CloseNow()
	}

	settle()
	replay("the first REQ", live, true, first.ID)
	replay("a replay before its answer had time to arrive", live, true, first.ID)
	settle()
	// The same id and filters with no since say nothing of what the
	// client holds: welshman's resubscribe, and just as well nostr-tools'
	// sub:1 or go-nostr's 1 from an app started afresh, with nothing.
	replay("the same REQ again, no since, after events were sent", live, true, first.ID)
	settle()
	replay("buzz desktop's replay (since last seen - 5 s)", buzz, false)

	second := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "while bob was away")
	ba.accept(second)
	replay("a replay after a post", live, true, first.ID, second.ID)
	replay("buzz's replay after a post", buzz, true, first.ID, second.ID)
	settle()
	replay("a replay of an answer read right after a post", live, true, first.ID, second.ID)
	settle()
	replay("a replay of a quiet answer, since last seen - 5 s", sinceLastSeen(second), false)

	ba.accept(signed(t, alice, 5, nostr.Tags{{"e", second.ID}}, ""))
	replay("a replay after a deletion", live, true, first.ID)
	settle()
	replay("a replay after the deletion's answer", live, true, first.ID)
	settle()
	replay("a replay of a quiet answer after the deletion, since last seen - 5 s", sinceLastSeen(first), false)

	ba.accept(signed(t, alice, 9001, nostr.Tags{{"h", ch}, {"p", bob.Pub}}, ""))
	replay("the removed member's replay", live, true)
	settle()
	replay("the removed member's next replay", live, true)
}

// TestNDKKeepaliveProbeGetsEOSEWithoutTheDatabase: NDK's keepalive probe
// after 120 s of silence (core/src/relay/keepalive.ts: a REQ of kind 99999
// with limit 0, resolved by any answer, then its CLOSE) gets EOSE, not a
// CLOSED for the out-of-range kind, and neither it nor the CLOSE runs a
// database statement. A kind out of range without limit 0 is still
// invalid:.
func TestNDKKeepaliveProbeGetsEOSEWithoutTheDatabase(t *testing.T) {
	skipStatementsInProcesses(t)
	r := idleRelay(t)
	alice := testkit.NewKey(t)
	rc := authRaw(t, r, alice)
	before := r.App.Store.Statements()
	if got := rc.reqAnswer("probe-x1", map[string]any{"kinds": []int{99999}, "limit": 0}); got != "EOSE" {
		t.Fatalf("NDK's probe: %s", got)
	}
	rc.sendJSON([]any{"CLOSE", "probe-x1"})
	eventually(t, "the CLOSE did not end the probe", func() bool {
		subs, err := r.App.Sessions.SubscriptionsByKey(ctxT(t), r.App.Config.DefaultCommunity, [][2]string{{connOf(t, r, alice), "probe-x1"}})
		return err == nil && len(subs) == 0
	})
	if n := r.App.Store.Statements() - before; n != 0 {
		t.Fatalf("the probe and its CLOSE ran %d statements", n)
	}
	if got := rc.reqAnswer("bad", map[string]any{"kinds": []int{99999}}); got[:len("invalid:")] != "invalid:" {
		t.Fatalf("a kind out of range: %s", got)
	}
}

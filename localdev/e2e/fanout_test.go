package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestAsyncFanout: with the inline threshold forced to 2 connections and
// batches of 3, live delivery to a private channel's audience goes through
// the fan-out function (the emulated asynchronous Lambda invoke running
// functions/fanout's handler), reaches every member exactly once, and
// re-checks access where it runs: a non-member's pinned subscription gets
// nothing, and a member removed after subscribing gets CLOSED restricted:,
// never the event. It runs twice: with the function's handler in this
// process (make dev), and as processes of functions/fanout's own binary
// served the Lambda Runtime API (emulator.Processes), posting to the
// @connections API over HTTP as from Lambda.
func TestAsyncFanout(t *testing.T) {
	t.Run("in process", func(t *testing.T) { asyncFanout(t, Options{FanoutInlineMax: 2, FanoutBatchSize: 3}) })
	t.Run("function processes", func(t *testing.T) {
		asyncFanout(t, Options{FanoutInlineMax: 2, FanoutBatchSize: 3, FanoutProcesses: 2})
	})
}

func asyncFanout(t *testing.T, o Options) {
	r := StartTest(t, o)
	alice := testkit.NewKey(t)
	ra := dial(t, r)
	login(t, ra, alice)
	ch := createChannel(t, ra, alice, "private")
	const members = 7
	req := []any{"REQ", "live", map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 0}}
	var subs []*rawConn
	var keys []user
	for range members {
		u := testkit.NewKey(t)
		publish(t, ra, alice, 9000, nostr.Tags{{"h", ch}, {"p", u.Pub}}, "")
		rc := authedRaw(t, r, u)
		rc.sendJSON(req)
		rc.expect("EOSE")
		subs, keys = append(subs, rc), append(keys, u)
	}
	carol := authedRaw(t, r, testkit.NewKey(t)) // never a member
	carol.sendJSON(req)
	carol.expect("EOSE")
	r.Lambda.Wait() // the setup's own runs (its 9000s reach the members' subscriptions) count before the baseline
	before := r.Lambda.RunsOf(emulator.FanoutFunction)

	first := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "first")
	second := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "second")
	for i, rc := range subs {
		got := map[string]int{}
		for range 2 {
			sub, ev := rc.event()
			if sub != "live" {
				t.Fatalf("member %d: event for subscription %q", i, sub)
			}
			got[ev.ID]++
		}
		if got[first.ID] != 1 || got[second.ID] != 1 {
			t.Fatalf("member %d got %v, want each of %s and %s once", i, got, first.ID, second.ID)
		}
	}
	// carol never was a member: she gets neither the events nor a CLOSED
	// that would tell her the channel exists and is busy (the live-CLOSED
	// rule of docs/security.md); checked with the others at the end.
	// 8 subscriptions in parts of about 3: per event, the publisher's one
	// hand-off, whose run splits the audience and invokes 2 more.
	r.Lambda.Wait()
	if runs := r.Lambda.RunsOf(emulator.FanoutFunction) - before; runs != 6 {
		t.Fatalf("fan-out function ran %d times for 2 events, want 6", runs)
	}

	// Remove member 0 after it subscribed: the removal is delivered by the
	// fan-out function, which finds it can no longer read the channel.
	publish(t, ra, alice, 9001, nostr.Tags{{"h", ch}, {"p", keys[0].Pub}}, "")
	if msg := subs[0].expect("CLOSED"); !strings.HasPrefix(str(t, msg[2]), "restricted:") {
		t.Fatalf("removed member: %s", joinRaw(msg))
	}
	third := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "third")
	for i, rc := range subs[1:] {
		if _, ev := rc.event(); ev.ID != third.ID {
			t.Fatalf("member %d got %s, want %s", i+1, ev.ID, third.ID)
		}
	}
	// A reply beyond the threshold: the publisher hands it off with the
	// root's fresh 39005, which reaches only the subscription asking for
	// kind 39005.
	subs[1].sendJSON([]any{"REQ", "summaries", map[string]any{"kinds": []int{39005}, "#h": []string{ch}, "limit": 0}})
	subs[1].expect("EOSE")
	reply := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}, {"e", third.ID, "", "reply"}}, "reply")
	got := subs[1].events(2)
	if got["live"].ID != reply.ID {
		t.Fatalf("member 1 got %v on live, want the reply", got["live"])
	}
	if sum := got["summaries"]; sum.Kind != 39005 || sum.Tags.GetFirst([]string{"e", third.ID}) == nil || replyCount(t, sum) != 1 {
		t.Fatalf("member 1 got %v on summaries, want the root's 39005 of 1 reply", sum)
	}
	for i, rc := range subs[2:] {
		if sub, ev := rc.event(); sub != "live" || ev.ID != reply.ID {
			t.Fatalf("member %d got %s on %s, want the reply on live", i+2, ev.ID, sub)
		}
	}
	r.Lambda.Wait()
	// Nothing more for anyone: no duplicate, nothing after CLOSED.
	for i, rc := range append(subs, carol) {
		if msg, ok := rc.maybeRead(200 * time.Millisecond); ok {
			t.Fatalf("connection %d got an extra message %s", i, joinRaw(msg))
		}
	}
}

// maybeRead returns the next message if one arrives within d. A timeout
// closes the socket (coder/websocket), so it is the last read of a test.
// An AUTH repeating the connection's challenge is skipped (rawConn.read).
func (rc *rawConn) maybeRead(d time.Duration) ([]json.RawMessage, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		_, data, err := rc.c.Read(ctx)
		if err != nil {
			return nil, false
		}
		var parts []json.RawMessage
		_ = json.Unmarshal(data, &parts)
		if !rc.repeatedChallenge(parts) {
			return parts, true
		}
	}
}

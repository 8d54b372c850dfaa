package e2e

import (
	"encoding/json"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// rawEvent reads the next EVENT and returns its subscription and event.
func (rc *rawConn) event() (string, nostr.Event) {
	rc.t.Helper()
	return rc.eventOf(rc.expect("EVENT"))
}

// events reads n EVENTs, which must be for n distinct subscriptions (the
// relay orders deliveries within a subscription, not across them).
func (rc *rawConn) events(n int) map[string]nostr.Event {
	rc.t.Helper()
	out := map[string]nostr.Event{}
	for range n {
		sub, ev := rc.event()
		if _, dup := out[sub]; dup {
			rc.t.Fatalf("two events for %s; the second is kind %d", sub, ev.Kind)
		}
		out[sub] = ev
	}
	return out
}

func authedRaw(t *testing.T, r *Relay, u user) *rawConn {
	t.Helper()
	rc := dialRaw(t, r)
	rc.send(`["REQ","warmup",{"limit":0}]`)
	challenge := str(t, rc.expect("AUTH")[1])
	rc.expect("CLOSED")
	rc.auth(r, u, challenge)
	return rc
}

// replyCount is the reply_count of a 39005's content.
func replyCount(t *testing.T, sum nostr.Event) int {
	t.Helper()
	var content struct {
		ReplyCount *int `json:"reply_count"`
	}
	if err := json.Unmarshal([]byte(sum.Content), &content); err != nil || content.ReplyCount == nil {
		t.Fatalf("39005 content %q", sum.Content)
	}
	return *content.ReplyCount
}

// TestSystemChannelLive: a live filter without #h never gets system-channel
// events (NIP-CL); one that names the channel does, for a member.
func TestSystemChannelLive(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	ra := dial(t, r)
	login(t, ra, alice)
	sys := createChannelOfType(t, ra, alice, "system")
	open := createChannel(t, ra, alice, "open")

	rc := authedRaw(t, r, alice)
	rc.sendJSON([]any{"REQ", "all", map[string]any{"kinds": []int{9}, "limit": 0}})
	rc.expect("EOSE")
	rc.sendJSON([]any{"REQ", "named", map[string]any{"kinds": []int{9}, "#h": []string{sys}, "limit": 0}})
	rc.expect("EOSE")
	secret := publish(t, ra, alice, 9, nostr.Tags{{"h", sys}}, "config")
	if sub, ev := rc.event(); sub != "named" || ev.ID != secret.ID {
		t.Fatalf("system event went to %s", sub)
	}
	visible := publish(t, ra, alice, 9, nostr.Tags{{"h", open}}, "hello")
	if sub, ev := rc.event(); sub != "all" || ev.ID != visible.ID {
		t.Fatalf("got %s %q, want the open channel's event on all (and nothing of the system channel before it)", sub, ev.Content)
	}
}

func createChannelOfType(t *testing.T, rl *nostr.Relay, u user, typ string) string {
	t.Helper()
	id := createChannelID()
	publish(t, rl, u, 9007, nostr.Tags{{"h", id}, {"name", "sys-" + id[:8]}, {"channel_type", typ}}, "")
	return id
}

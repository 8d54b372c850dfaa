package e2e

import (
	"encoding/json"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// rawEvent reads the next EVENT and returns its subscription and event.
func (rc *rawConn) event() (string, nostr.Event) {
	rc.t.Helper()
	return rc.eventOf(rc.expect("EVENT"))
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

// TestReplyPushesThreadSummary: a reply reaches the channel's subscribers
// followed by a fresh relay-signed 39005 for its root.
func TestReplyPushesThreadSummary(t *testing.T) {
	r := newRelay(t)
	alice := newUser()
	ra := dial(t, r)
	login(t, ra, alice)
	ch := createChannel(t, ra, alice, "open")
	root := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "root")

	rc := authedRaw(t, r, newUser())
	// A 39005 goes live only to a filter that asks for kind 39005 (base
	// commit 0f0192e, "live 39005 by kind").
	rc.sendJSON([]any{"REQ", "timeline", map[string]any{"kinds": []int{9, 39005}, "#h": []string{ch}, "limit": 0}})
	rc.expect("EOSE")
	reply := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}, {"e", root.ID, "", "reply"}}, "a reply")
	if sub, ev := rc.event(); sub != "timeline" || ev.ID != reply.ID {
		t.Fatalf("first delivery %s %s, want the reply", sub, ev.ID)
	}
	sub, sum := rc.event()
	if sub != "timeline" || sum.Kind != 39005 || sum.PubKey != r.App.Signer.PublicKey() || sum.Tags.GetFirst([]string{"e", root.ID}) == nil {
		t.Fatalf("second delivery %s %+v, want the root's 39005", sub, sum)
	}
	if ok, _ := sum.CheckSignature(); !ok {
		t.Fatal("39005 signature")
	}
	var content struct {
		ReplyCount int `json:"reply_count"`
	}
	if err := json.Unmarshal([]byte(sum.Content), &content); err != nil || content.ReplyCount != 1 {
		t.Fatalf("39005 content %q", sum.Content)
	}
}

// TestSystemChannelLive: a live filter without #h never gets system-channel
// events (NIP-CL); one that names the channel does, for a member.
func TestSystemChannelLive(t *testing.T) {
	r := newRelay(t)
	alice := newUser()
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

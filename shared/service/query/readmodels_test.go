package query

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// Buzz's read models hold on the window paths as on the plain ones (issue
// 36): a reminder (30300), an unshared persona (30175) and a private
// managed agent (30179) filed in a channel by its h tag are their author's
// alone in the channel window, its COUNT and the thread window, while a
// shared persona is everyone's; the author reads all of them.
func TestWindowHidesOthersGatedKinds(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	bob := newUser()
	e.addMember(alice, ch, bob)
	msg := e.msg(alice, ch, t0+10, "hello")
	reminder := e.submit(alice, 30300, t0+11, "ciphertext", nostr.Tag{"h", ch}, nostr.Tag{"d", "r1"}, nostr.Tag{"not_before", "1790009999"})
	persona := e.submit(alice, 30175, t0+12, "{}", nostr.Tag{"h", ch}, nostr.Tag{"d", "p1"})
	agent := e.submit(alice, 30179, t0+13, "ciphertext", nostr.Tag{"h", ch}, nostr.Tag{"d", bob.pk})
	shared := e.submit(alice, 30175, t0+14, "{}", nostr.Tag{"h", ch}, nostr.Tag{"d", "p2"}, nostr.Tag{"shared", "true"})
	gated := []*nostr.Event{reminder, persona, agent}

	bodies := map[string]string{
		"window":       fmt.Sprintf(`[{"#h":[%q],"top_level":true}]`, ch),
		"window kinds": fmt.Sprintf(`[{"kinds":[9,30300,30175,30179],"#h":[%q],"top_level":true}]`, ch),
	}
	for name, body := range bodies {
		got := e.query(bob, body)
		for _, ev := range gated {
			if has(got, ev.ID) {
				t.Errorf("%s: another member reads alice's kind %d", name, ev.Kind)
			}
		}
		if !has(got, msg.ID) || !has(got, shared.ID) {
			t.Errorf("%s: another member misses the message or the shared persona: kinds %v", name, kindsOf(got))
		}
		mine := e.query(alice, body)
		for _, ev := range append(gated, msg, shared) {
			if !has(mine, ev.ID) {
				t.Errorf("%s: the author misses her kind %d", name, ev.Kind)
			}
		}
		// COUNT counts the rows each reader gets (the window without kinds
		// also has the channel's 9007 and 9000).
		if nb, na := e.count(bob, body), e.count(alice, body); nb != na-int64(len(gated)) {
			t.Errorf("%s: another member's COUNT %d, the author's %d: want the author's less her %d gated events", name, nb, na, len(gated))
		}
	}
	// The plain read agreed already; it still does.
	plain := fmt.Sprintf(`[{"#h":[%q]}]`, ch)
	for _, ev := range gated {
		if has(e.query(bob, plain), ev.ID) {
			t.Errorf("plain: another member reads alice's kind %d", ev.Kind)
		}
	}
}

// A thread window (and its COUNT, over POST /query and a WebSocket REQ) on
// the id of an event the reader may not see answers exactly as one on an
// id nothing stored: no rows, no 39007, a COUNT of 0. The author is served.
func TestThreadWindowOnGatedIDAnswersAsUnknown(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	bob := newUser()
	e.addMember(alice, ch, bob)
	reminder := e.submit(alice, 30300, t0+11, "ciphertext", nostr.Tag{"h", ch}, nostr.Tag{"d", "r1"}, nostr.Tag{"not_before", "1790009999"})
	persona := e.submit(alice, 30175, t0+12, "{}", nostr.Tag{"h", ch}, nostr.Tag{"d", "p1"})
	body := func(root string) string {
		return fmt.Sprintf(`[{"thread_window":true,"#h":[%q],"#e":[%q]}]`, ch, root)
	}
	answer := func(reader user, root string) string {
		t.Helper()
		evs := e.query(reader, body(root))
		raws, err := e.q.ThreadWindows(e.ctx, "default", testHost, reader.pk, []json.RawMessage{json.RawMessage(strings.Trim(body(root), "[]"))})
		if err != nil {
			t.Fatal(err)
		}
		// The 39007's d binds the root, so compare what is served, not
		// the bytes: how many events of which kinds, and the COUNT.
		return fmt.Sprintf("query kinds %v, REQ %d events, COUNT %d", kindsOf(evs), len(raws), e.count(reader, body(root)))
	}
	unknown := answer(bob, strings.Repeat("ab", 32))
	for _, ev := range []*nostr.Event{reminder, persona} {
		if got := answer(bob, ev.ID); got != unknown {
			t.Errorf("kind %d: another member's thread window answers %q, an unknown id %q", ev.Kind, got, unknown)
		}
		if got := answer(alice, ev.ID); got == unknown {
			t.Errorf("kind %d: the author's thread window is not served: %q", ev.Kind, got)
		}
	}
}

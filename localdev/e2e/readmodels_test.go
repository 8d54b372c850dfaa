package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Issue 36: Buzz's read models and private channels on every read path,
// end to end through the emulator with go-nostr and the HTTP bridge.

// Buzz's gated kinds filed in a channel by their h tag (a reminder, an
// unshared persona, a private managed agent) stay their author's in the
// channel window and its /count, as in the plain read; and a thread window
// on the id of one of them answers another member exactly as one on an id
// nothing is stored under, over /query, /count and a WebSocket REQ.
func TestBuzzGatedKindsStayHiddenInWindows(t *testing.T) {
	r, alice, ba, ch := openChannel(t)
	bob, bb := newMember(t, r, ba, ch)
	msg := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "hello")
	ba.accept(msg)
	gated := []nostr.Event{
		signed(t, alice, 30300, nostr.Tags{{"h", ch}, {"d", "r1"}, {"not_before", "1893456000"}}, "nip44-ciphertext"),
		signed(t, alice, 30175, nostr.Tags{{"h", ch}, {"d", "persona"}}, "{}"),
		signed(t, alice, 30179, nostr.Tags{{"h", ch}, {"d", bob.Pub}}, "nip44-ciphertext"),
	}
	for _, ev := range gated {
		ba.accept(ev)
	}
	window := map[string]any{"#h": []string{ch}, "top_level": true}
	for _, ev := range gated {
		if !hasID(ba.query(window), ev.ID) {
			t.Errorf("the author's window misses her kind %d", ev.Kind)
		}
		if hasID(bb.query(window), ev.ID) {
			t.Errorf("another member's window has the author's kind %d", ev.Kind)
		}
		if hasID(bb.query(map[string]any{"#h": []string{ch}}), ev.ID) {
			t.Errorf("another member's plain read has the author's kind %d", ev.Kind)
		}
	}
	if !hasID(bb.query(window), msg.ID) {
		t.Error("another member's window misses the message")
	}
	if nb, na := bb.count(window), ba.count(window); nb != na-len(gated) {
		t.Errorf("window /count: another member %d, the author %d; want the author's less her %d gated events", nb, na, len(gated))
	}

	// The thread window on a gated id and on an unknown id.
	thread := func(b *bridge, root string) string {
		f := map[string]any{"thread_window": true, "#h": []string{ch}, "#e": []string{root}}
		var ks []int
		for _, ev := range b.query(f) {
			ks = append(ks, ev.Kind)
		}
		return fmt.Sprintf("/query kinds %v, /count %d", ks, b.count(f))
	}
	unknown := unknownID(t, bob)
	want := thread(bb, unknown)
	for _, ev := range gated {
		if got := thread(bb, ev.ID); got != want {
			t.Errorf("kind %d: another member's thread window answers %q, an unknown id %q", ev.Kind, got, want)
		}
		if got := thread(ba, ev.ID); got == want {
			t.Errorf("kind %d: the author's thread window is not served (%q)", ev.Kind, got)
		}
	}
	rc := dialRaw(t, r)
	rc.send(`["REQ","warmup",{"kinds":[1],"limit":0}]`)
	challenge := str(t, rc.expect("AUTH")[1])
	rc.expect("CLOSED")
	rc.auth(r, bob, challenge)
	reqThread := func(sub, root string) string {
		t.Helper()
		rc.sendJSON([]any{"REQ", sub, map[string]any{"thread_window": true, "#h": []string{ch}, "#e": []string{root}}})
		var ks []int
		for {
			parts := rc.read()
			switch verb := str(t, parts[0]); verb {
			case "EOSE":
				return fmt.Sprint(ks)
			case "EVENT":
				var ev nostr.Event
				if err := json.Unmarshal(parts[2], &ev); err != nil {
					t.Fatal(err)
				}
				ks = append(ks, ev.Kind)
			default:
				t.Fatalf("REQ %s: %s", sub, joinRaw(parts))
			}
		}
	}
	wantREQ := reqThread("unknown", unknown)
	for i, ev := range gated {
		if got := reqThread(fmt.Sprint("gated", i), ev.ID); got != wantREQ {
			t.Errorf("kind %d: another member's REQ thread window sends kinds %s, for an unknown id %s", ev.Kind, got, wantREQ)
		}
	}
}

// A Buzz client's private channel (visibility=private) is invisible to a
// non-member, its metadata included, as on Buzz's own relay: its
// 39000-39003 by #d, by {}, by #p, by ids over REQ and /query, in /count
// and COUNT, and live; a member reads them. A NIP-29 group created private
// without hidden keeps NIP-29's rule: its metadata stays readable.
func TestBuzzPrivateChannelInvisibleToNonMembers(t *testing.T) {
	r := newRelay(t)
	alice, ra := loggedIn(t, r)
	eve, re := loggedIn(t, r)
	ba, be := newBridge(t, r, alice), newBridge(t, r, eve)
	ch := newChannel(t, ba, "private")
	bob, bb := newMember(t, r, ba, ch)
	state := bb.query(map[string]any{"kinds": []int{39000, 39001, 39002, 39003}, "#d": []string{ch}})
	if len(state) != 4 {
		t.Fatalf("the member reads %d of the channel's 39000-39003, want 4", len(state))
	}
	ids := idsOf(state)
	filters := map[string]nostr.Filter{
		"#d":  {Kinds: []int{39000, 39001, 39002, 39003}, Tags: nostr.TagMap{"d": {ch}}},
		"{}":  {},
		"#p":  {Kinds: []int{39002}, Tags: nostr.TagMap{"p": {bob.Pub}}},
		"ids": {IDs: ids},
	}
	ofChannel := func(evs []nostr.Event) []int {
		var ks []int
		for _, ev := range evs {
			if ev.Tags.GetD() == ch || slices.ContainsFunc(ev.Tags, func(tg nostr.Tag) bool { return len(tg) >= 2 && tg[0] == "h" && tg[1] == ch }) {
				ks = append(ks, ev.Kind)
			}
		}
		return ks
	}
	for name, f := range filters {
		req, err := re.QuerySync(ctxT(t), f)
		if err != nil {
			t.Fatal(err)
		}
		var got []nostr.Event
		for _, ev := range req {
			got = append(got, *ev)
		}
		if ks := ofChannel(got); len(ks) != 0 {
			t.Errorf("%s: a non-member reads the private channel's kinds %v over REQ", name, ks)
		}
		body := map[string]any{}
		raw, _ := json.Marshal(f)
		_ = json.Unmarshal(raw, &body)
		if ks := ofChannel(be.query(body)); len(ks) != 0 {
			t.Errorf("%s: a non-member reads the private channel's kinds %v over /query", name, ks)
		}
		n, _, err := re.Count(ctxT(t), nostr.Filters{f})
		if err != nil {
			t.Fatal(err)
		}
		if int(n) != len(got) || be.count(body) != len(got) {
			t.Errorf("%s: COUNT %d, /count %d, REQ %d events", name, n, be.count(body), len(got))
		}
	}
	for _, name := range []string{"#d", "#p", "ids"} {
		body := map[string]any{}
		raw, _ := json.Marshal(filters[name])
		_ = json.Unmarshal(raw, &body)
		if len(ofChannel(bb.query(body))) == 0 {
			t.Errorf("%s: the member reads nothing of the channel", name)
		}
	}

	// Live: a rename publishes a fresh 39000, and a new member a fresh
	// 39002; the member gets them, the non-member none.
	rb := dial(t, r)
	login(t, rb, bob)
	wb, we := watch(t, rb), watch(t, re)
	rename := signed(t, alice, 9002, nostr.Tags{{"h", ch}, {"name", "renamed"}}, "")
	ba.accept(rename)
	meta := stateHead(t, ba, 39000, ch)
	if !wb.sees(ra, alice, meta.ID) {
		t.Error("the member's live subscription missed the new 39000")
	}
	if we.sees(ra, alice, meta.ID) {
		t.Error("a non-member's live subscription got the private channel's 39000")
	}
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", testkit.NewKey(t).Pub}}, ""))
	members := stateHead(t, ba, 39002, ch)
	if we.sees(ra, alice, members.ID) {
		t.Error("a non-member's live subscription got the private channel's 39002")
	}

	// NIP-29's private without hidden: the metadata stays readable.
	group := createChannelID()
	ba.accept(signed(t, alice, 9007, nostr.Tags{{"h", group}, {"name", "nip29"}, {"private"}, {"closed"}}, ""))
	if evs := be.query(map[string]any{"kinds": []int{39000}, "#d": []string{group}}); len(evs) != 1 {
		t.Errorf("a NIP-29 private group without hidden: a non-member reads %d 39000, want 1", len(evs))
	}
}

package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/push"
)

// TestPushSubscriptionsAndLeasesAreReadByTheirAuthorOnly: a key's 30390
// (its callback URL) and 30350 (its encrypted lease) are read by their
// author on every path and by no other key on any: REQ by kind, id and
// author, /query by kind, id and author, COUNT over /count, search over
// REQ and /query, and live delivery; another key's reaction or deletion
// naming one is answered as for an id never stored.
func TestPushSubscriptionsAndLeasesAreReadByTheirAuthorOnly(t *testing.T) {
	r, _, info := leaseRelay(t)
	alice, ra := loggedIn(t, r)
	bob, rb := loggedIn(t, r)
	ba, bb := newBridge(t, r, alice), newBridge(t, r, bob)
	wa, wb := watch(t, ra), watch(t, rb)
	cb := newCallbacks(t)

	sub := subscribe9a(t, r, ra, alice, "phone", cb.url("/alice"), true, `{"kinds":[9]}`)
	lease := leaseEvent(t, alice, info, "install-1", time.Now().Unix()+3600,
		activeLease(info, 1, "grant-alice", map[string]any{"kinds": []int{9}, "#p": []string{alice.Pub}}, "default"))
	if err := ra.Publish(ctxT(t), lease); err != nil {
		t.Fatalf("alice's lease: %v", err)
	}
	for _, ev := range []nostr.Event{sub, lease} {
		name := fmt.Sprintf("kind %d", ev.Kind)
		wantReadable(t, name+": the author", readable(t, ra, ba, ev), true)
		wantReadable(t, name+": another key", readable(t, rb, bb, ev), false)
		if !wa.sees(ra, alice, ev.ID) {
			// The watchers subscribed before both were published; the
			// sentinel of sees comes after them.
			t.Errorf("%s: the author's live subscription missed it", name)
		}
		if wb.sees(ra, alice, ev.ID) {
			t.Errorf("%s: another key's live subscription got it", name)
		}
		if got, want := notStoredAnswer(t, bb, ev.ID), notStoredAnswer(t, bb, unknownID(t, bob)); got != want {
			t.Errorf("%s: another key's reaction and deletion answer %q, for an unknown id %q", name, got, want)
		}
		// Search: never an answer naming it, for anyone (author-only kinds
		// are not in the search index).
		for _, who := range []struct {
			name string
			rl   *nostr.Relay
			b    *bridge
		}{{"the author", ra, ba}, {"another key", rb, bb}} {
			f := map[string]any{"search": "phone", "kinds": []int{ev.Kind}}
			body, _ := json.Marshal([]any{f})
			if _, out := who.b.post("/query", body); strings.Contains(string(out), ev.ID) {
				t.Errorf("%s: %s's /query search answers it: %s", name, who.name, out)
			}
			evs, err := who.rl.QuerySync(ctxT(t), nostr.Filter{Search: "phone", Kinds: []int{ev.Kind}})
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(evs, func(e *nostr.Event) bool { return e.ID == ev.ID }) {
				t.Errorf("%s: %s's REQ search answers it", name, who.name)
			}
		}
	}
}

// TestPushLimitsPerKey: a key holds at most push.MaxSubscriptionsPerKey
// NIP-9a subscriptions and push.MaxLeasesPerKey NIP-PL leases in a
// community; one more is refused and stored nowhere, while replacing one
// already held is accepted, and another key's count is its own.
func TestPushLimitsPerKey(t *testing.T) {
	r, _, info := leaseRelay(t)
	alice, ra := loggedIn(t, r)
	bob, rb := loggedIn(t, r)
	ba := newBridge(t, r, alice)
	cb := newCallbacks(t)
	exp := time.Now().Unix() + 3600
	lease := func(u user, i int) nostr.Event {
		return leaseEvent(t, u, info, fmt.Sprintf("install-%d", i), exp,
			activeLease(info, 1, fmt.Sprintf("grant-%s-%d", u.Pub[:8], i), map[string]any{"kinds": []int{9}, "#p": []string{u.Pub}}, "default"))
	}
	for i := range push.MaxSubscriptionsPerKey {
		subscribe9a(t, r, ra, alice, fmt.Sprintf("s%d", i), cb.url("/a"), false, `{"kinds":[9]}`)
	}
	for i := range push.MaxLeasesPerKey {
		if err := ra.Publish(ctxT(t), lease(alice, i)); err != nil {
			t.Fatalf("lease %d: %v", i, err)
		}
	}
	over9a := signed(t, alice, 30390, nostr.Tags{{"d", "one-more"}, {"relay", r.WSURL + "/"}, {"filter", `{"kinds":[9]}`}, {"callback", cb.url("/a")}}, "")
	wantPrefix(t, refused(t, ra, over9a), "restricted:")
	overPL := lease(alice, push.MaxLeasesPerKey)
	wantPrefix(t, refused(t, ra, overPL), "invalid:")
	for _, ev := range []nostr.Event{over9a, overPL} {
		if evs := ba.query(map[string]any{"ids": []string{ev.ID}}); len(evs) != 0 {
			t.Errorf("kind %d over the limit was stored", ev.Kind)
		}
	}
	// Replacing a held address is no new subscription.
	time.Sleep(1100 * time.Millisecond)
	subscribe9a(t, r, ra, alice, "s0", cb.url("/b"), false, `{"kinds":[9]}`)
	// Bob's own count starts at zero.
	subscribe9a(t, r, rb, bob, "s0", cb.url("/bob"), false, `{"kinds":[9]}`)
	if err := rb.Publish(ctxT(t), lease(bob, 0)); err != nil {
		t.Errorf("bob's first lease: %v", err)
	}
}

// TestNIP9aOversizeInput: a 30390 whose callback, filter or ignore tag is
// over its cap is refused invalid:, and an event too large to include is
// called back with its id only, the body within push.MaxPayloadBytes.
func TestNIP9aOversizeInput(t *testing.T) {
	r := StartTest(t, Options{Push: true})
	w := watchPush(r)
	cb := newCallbacks(t)
	alice, arl := loggedIn(t, r)
	bob, brl := loggedIn(t, r)
	open := createChannel(t, arl, alice, "open")
	relayTag := nostr.Tag{"relay", r.WSURL + "/"}
	long := cb.url("/" + strings.Repeat("x", push.MaxCallbackLength))
	huge := `{"kinds":[9],"authors":["` + strings.Repeat("a", push.MaxFilterBytes) + `"]}`
	for name, tags := range map[string]nostr.Tags{
		"callback over its cap": {{"d", "a"}, relayTag, {"filter", `{"kinds":[9]}`}, {"callback", long}},
		"filter over its cap":   {{"d", "a"}, relayTag, {"filter", huge}, {"callback", cb.url("/x")}},
		"ignore over its cap":   {{"d", "a"}, relayTag, {"filter", `{"kinds":[9]}`}, {"ignore", huge}, {"callback", cb.url("/x")}},
	} {
		t.Run(name, func(t *testing.T) {
			wantPrefix(t, refused(t, brl, signed(t, bob, 30390, tags, "")), "invalid:")
		})
	}

	subscribe9a(t, r, brl, bob, "big", cb.url("/big"), true, `{"kinds":[9]}`)
	big := publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, strings.Repeat("y", 100<<10))
	small := publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "small")
	w.settle(t, big, small)
	bodies := cb.bodies("/big")
	if len(bodies) != 2 {
		t.Fatalf("%d callbacks, want 2", len(bodies))
	}
	for _, b := range bodies {
		raw, _ := json.Marshal(b.Raw)
		if len(raw) > push.MaxPayloadBytes {
			t.Errorf("callback %s is %d bytes, over the cap %d", b.ID, len(raw), push.MaxPayloadBytes)
		}
		_, has := b.Raw["event"]
		switch b.ID {
		case big.ID:
			if has {
				t.Error("the 100 KiB event was included")
			}
		case small.ID:
			if !has {
				t.Error("the small event was not included")
			}
		default:
			t.Errorf("callback for %s", b.ID)
		}
	}
}

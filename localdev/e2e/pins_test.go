package e2e

import (
	"reflect"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// groupPins returns the 39005s of evs whose d is group (NIP-29's pin list).
func groupPins(evs []nostr.Event, group string) []nostr.Event {
	var out []nostr.Event
	for _, ev := range evs {
		if ev.Kind == 39005 && ev.Tags.GetD() == group {
			out = append(out, ev)
		}
	}
	return out
}

// windowShape is what a Buzz client takes from a window page: its rows, the
// reply counts of its summaries, its aux events and has_more (the 39005 and
// 39006 are re-signed on each read, so their ids are not compared).
func windowShape(p windowPage) []any {
	return []any{idsOf(p.rows), p.summaries, idsOf(p.aux), p.hasMore}
}

// TestNIP29PinsBesideBuzzWindowAndSummaries, with go-nostr: an owner's
// 9010 pins two messages; generic reads of 39005 (by #d group, by kind, by
// the relay's key; REQ, COUNT, POST /query and /count) serve one
// relay-signed pin list in the 9010's order (and a live #d subscription
// gets it), and Buzz's window with its
// thread summaries, a #h REQ and a live #h subscription of the same
// channel see exactly what they saw before. Attacks: a member's 9010 is
// refused restricted:, and a non-member reads nothing of a private group's
// pins on any door.
func TestNIP29PinsBesideBuzzWindowAndSummaries(t *testing.T) {
	r := newRelay(t)
	alice, rl := loggedIn(t, r)
	bob, brl := loggedIn(t, r)
	relayKey := r.App.Signer.PublicKey()
	ch := createChannel(t, rl, alice, "open")
	m1 := publish(t, rl, alice, 9, nostr.Tags{{"h", ch}}, "first")
	m2 := publish(t, rl, alice, 9, nostr.Tags{{"h", ch}}, "second, a thread")
	publish(t, brl, bob, 9, nostr.Tags{{"h", ch}, {"e", m2.ID, "", "reply"}}, "a reply")

	ab := newBridge(t, r, alice)
	before := ab.window(ch, 50, nil, nil)
	if before.summaries[m2.ID] != 1 {
		t.Fatalf("the thread's summary before pins: %v", before.summaries)
	}
	hBefore, err := rl.QuerySync(ctxT(t), nostr.Filter{Tags: nostr.TagMap{"h": {ch}}})
	if err != nil {
		t.Fatal(err)
	}
	live, err := rl.Subscribe(ctxT(t), nostr.Filters{{Tags: nostr.TagMap{"h": {ch}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Unsub()
	for range hBefore {
		next(t, live)
	}
	eose(t, live)

	byDLive, err := brl.Subscribe(ctxT(t), nostr.Filters{{Kinds: []int{39005}, Tags: nostr.TagMap{"d": {ch}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer byDLive.Unsub()
	eose(t, byDLive)
	// A key without the owner or admin role may not pin.
	wantPrefix(t, refused(t, brl, signed(t, bob, 9010, nostr.Tags{{"h", ch}, {"e", m1.ID}}, "")), "restricted:")
	pin := publish(t, rl, alice, 9010, nostr.Tags{{"h", ch}, {"e", m2.ID}, {"e", m1.ID}}, "")
	after := publish(t, rl, alice, 9, nostr.Tags{{"h", ch}}, "after the pins")

	// The live #h subscription gets the 9010 and the message, never the
	// pins. Live delivery runs after each OK, so the message published
	// once the 9010's OK came back may be delivered first.
	wantLive := map[string]bool{pin.ID: true, after.ID: true}
	for range 2 {
		ev := next(t, live)
		if !wantLive[ev.ID] || ev.Kind == 39005 {
			t.Fatalf("live #h got kind %d %s, want the 9010 %s and the message %s, each once", ev.Kind, ev.ID, pin.ID, after.ID)
		}
		delete(wantLive, ev.ID)
	}

	// A live subscription by #d gets the new pin list.
	if ev := next(t, byDLive); ev.Kind != 39005 || ev.Tags.GetD() != ch || ev.PubKey != relayKey {
		t.Fatalf("live #d got kind %d %v", ev.Kind, ev.Tags)
	}
	// Generic reads of 39005 find the pin list.
	want := nostr.Tags{{"d", ch}, {"e", m2.ID}, {"e", m1.ID}}
	for name, f := range map[string]nostr.Filter{
		"#d":     {Kinds: []int{39005}, Tags: nostr.TagMap{"d": {ch}}},
		"kind":   {Kinds: []int{39005}},
		"author": {Authors: []string{relayKey}, Kinds: []int{39005}},
	} {
		evs, err := rl.QuerySync(ctxT(t), f)
		if err != nil {
			t.Fatal(err)
		}
		var got []nostr.Event
		for _, ev := range evs {
			got = append(got, *ev)
		}
		p := groupPins(got, ch)
		if len(p) != 1 || !reflect.DeepEqual(p[0].Tags, want) {
			t.Fatalf("REQ by %s: %v", name, p)
		}
		checkRelaySigned(t, r, p[0])
	}
	byD := map[string]any{"kinds": []int{39005}, "#d": []string{ch}}
	if p := groupPins(ab.query(byD), ch); len(p) != 1 || !reflect.DeepEqual(p[0].Tags, want) {
		t.Fatalf("POST /query: %v", p)
	}
	if n := ab.count(byD); n != 1 {
		t.Fatalf("POST /count: %d", n)
	}
	if n, _, err := rl.Count(ctxT(t), nostr.Filters{{Kinds: []int{39005}, Tags: nostr.TagMap{"d": {ch}}}}); err != nil || n != 1 {
		t.Fatalf("COUNT: %d (%v)", n, err)
	}

	// Buzz's reads of the channel are unchanged: the window with its
	// summaries, and a #h REQ (the 9010 and the new message aside).
	now := ab.window(ch, 50, nil, nil)
	now.rows = slices.DeleteFunc(now.rows, func(ev nostr.Event) bool { return ev.ID == after.ID })
	if !reflect.DeepEqual(windowShape(now), windowShape(before)) {
		t.Fatalf("window with pins %v, without %v", windowShape(now), windowShape(before))
	}
	if p := groupPins(ab.query(windowRequest(ch, 50, nil, nil)), ch); len(p) != 0 {
		t.Fatal("the window serves the pin list")
	}
	hAfter, err := rl.QuerySync(ctxT(t), nostr.Filter{Tags: nostr.TagMap{"h": {ch}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range hAfter {
		if ev.ID != pin.ID && ev.ID != after.ID {
			ids = append(ids, ev.ID)
		}
		if ev.Kind == 39005 {
			t.Fatalf("a #h REQ serves a 39005: %v", ev.Tags)
		}
	}
	var was []string
	for _, ev := range hBefore {
		was = append(was, ev.ID)
	}
	slices.Sort(ids)
	slices.Sort(was)
	if !reflect.DeepEqual(ids, was) {
		t.Fatalf("#h REQ with pins %v, without %v", ids, was)
	}
	hPins := map[string]any{"#h": []string{ch}, "kinds": []int{39005}}
	if n := ab.count(hPins); n != 0 {
		t.Fatalf("#h COUNT of 39005: %d", n)
	}
	if evs := ab.query(hPins); len(evs) != 0 {
		t.Fatalf("#h POST /query of 39005: %d", len(evs))
	}
	if evs, err := rl.QuerySync(ctxT(t), nostr.Filter{Kinds: []int{39005}, Tags: nostr.TagMap{"h": {ch}}}); err != nil || len(evs) != 0 {
		t.Fatalf("#h REQ of 39005: %d (%v)", len(evs), err)
	}

	// A private group's pins: its members only, on every door.
	priv := createChannel(t, rl, alice, "private")
	secret := publish(t, rl, alice, 9, nostr.Tags{{"h", priv}}, "secret")
	publish(t, rl, alice, 9010, nostr.Tags{{"h", priv}, {"e", secret.ID}}, "")
	privD := nostr.Filter{Kinds: []int{39005}, Tags: nostr.TagMap{"d": {priv}}}
	if evs, err := rl.QuerySync(ctxT(t), privD); err != nil || len(evs) != 1 {
		t.Fatalf("a member's REQ of the private pins: %d (%v)", len(evs), err)
	}
	bb := newBridge(t, r, bob)
	for name, f := range map[string]nostr.Filter{"#d": privD, "kind": {Kinds: []int{39005}}, "author": {Authors: []string{relayKey}}} {
		evs, err := brl.QuerySync(ctxT(t), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Tags.GetD() == priv {
				t.Fatalf("a non-member's REQ by %s reads the private pins", name)
			}
		}
	}
	privQ := map[string]any{"kinds": []int{39005}, "#d": []string{priv}}
	if p := bb.query(privQ); len(p) != 0 {
		t.Fatalf("a non-member's POST /query reads the private pins: %v", p)
	}
	if n := bb.count(privQ); n != 0 {
		t.Fatalf("a non-member's POST /count counts the private pins: %d", n)
	}
	if n, _, err := brl.Count(ctxT(t), nostr.Filters{privD}); err != nil || n != 0 {
		t.Fatalf("a non-member's COUNT of the private pins: %d (%v)", n, err)
	}
	wantPrefix(t, refused(t, brl, signed(t, bob, 9010, nostr.Tags{{"h", priv}, {"e", secret.ID}}, "")), "restricted:")
}

package e2e

import (
	"strconv"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// NIP-70 at both doors, with go-nostr: a protected event is taken from its
// author's authenticated WebSocket and POST /events (NIP-98), and refused
// when another key sends it on either; a gift wrap another key signs is
// refused when protected.
func TestProtectedEventOnlyFromItsAuthorAtEveryDoor(t *testing.T) {
	r := newRelay(t)
	alice, rl := loggedIn(t, r)
	bob, brl := loggedIn(t, r)
	ch := createChannel(t, rl, alice, "open")
	// Over WebSocket: bob relays alice's protected message.
	protected := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"-"}}, "mine only")
	wantPrefix(t, refused(t, brl, protected), "restricted:")
	wantPrefix(t, refused(t, rl, signed(t, bob, 1059, nostr.Tags{{"p", alice.Pub}, {"-"}}, "wrap")), "restricted:")
	if err := rl.Publish(ctxT(t), protected); err != nil {
		t.Fatalf("the author's protected event: %v", err)
	}
	// Over POST /events with NIP-98.
	second := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"-"}}, "mine only, over HTTP")
	if a := newBridge(t, r, bob).submit(second); a.Accepted {
		t.Fatal("POST /events took another key's protected event")
	}
	newBridge(t, r, alice).accept(second)
	if got := newBridge(t, r, bob).query(map[string]any{"ids": []string{protected.ID, second.ID}}); len(got) != 2 {
		t.Fatalf("the protected events are read as any other: %d of 2", len(got))
	}
}

// NIP-40 at both doors: an event already expired is refused with invalid:
// over WebSocket and POST /events; one expiring in a second is taken, and
// after it has passed, neither door's read serves it (REQ, COUNT, POST
// /query), before any sweep.
func TestExpiredEventRefusedAndUnservedAtEveryDoor(t *testing.T) {
	r := newRelay(t)
	alice, rl := loggedIn(t, r)
	ch := createChannel(t, rl, alice, "open")
	past := nostr.Tag{"expiration", strconv.FormatInt(time.Now().Unix()-5, 10)}
	wantPrefix(t, refused(t, rl, signed(t, alice, 9, nostr.Tags{{"h", ch}, past}, "late")), "invalid:")
	if a := newBridge(t, r, alice).submit(signed(t, alice, 9, nostr.Tags{{"h", ch}, past}, "late")); a.Accepted || a.Message == "" {
		t.Fatalf("POST /events took an expired event: %+v", a)
	}
	soon := time.Now().Add(2 * time.Second).Unix()
	ev := publish(t, rl, alice, 9, nostr.Tags{{"h", ch}, {"expiration", strconv.FormatInt(soon, 10)}}, "brief")
	for time.Now().Unix() <= soon {
		time.Sleep(200 * time.Millisecond)
	}
	b := newBridge(t, r, alice)
	if got := b.query(map[string]any{"ids": []string{ev.ID}}); len(got) != 0 {
		t.Error("POST /query serves an expired event")
	}
	if n := b.count(map[string]any{"ids": []string{ev.ID}}); n != 0 {
		t.Errorf("POST /count counts an expired event: %d", n)
	}
	evs, err := rl.QuerySync(ctxT(t), nostr.Filter{IDs: []string{ev.ID}})
	if err != nil || len(evs) != 0 {
		t.Errorf("REQ serves an expired event: %d (%v)", len(evs), err)
	}
}

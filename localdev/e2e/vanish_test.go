package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/service/media"
)

// NIP-62 at both doors, with go-nostr and POST /events (NIP-98): a
// request to vanish relayed by another key or naming another relay is
// refused on either door and deletes nothing (the refusal reads the same
// whether the named key has data here or not: no existence oracle); from
// its author over WebSocket it deletes the key's events, reactions and
// blob (rows and S3 object), leaves the others' events, and its older
// events are refused when re-published on either door; over POST /events
// the OK carries what went.
func TestRequestToVanishAtEveryDoor(t *testing.T) {
	r := StartTest(t, Options{Media: true})
	bob, brl := loggedIn(t, r)
	alice, rl := loggedIn(t, r)
	ch := createChannel(t, brl, bob, "open")
	publish(t, rl, alice, 9021, nostr.Tags{{"h", ch}}, "")
	bobMsg := publish(t, brl, bob, 9, nostr.Tags{{"h", ch}}, "bob stays")
	blob := []byte("alice's picture " + time.Now().String())
	if status, reason := upload(t, r, alice, blob); status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("upload: %d %s", status, reason)
	}
	hash := media.Hash(blob)
	aliceMsg := publish(t, rl, alice, 9, nostr.Tags{{"h", ch}}, "see "+r.HTTPURL+"/"+hash)
	publish(t, rl, alice, 7, nostr.Tags{{"h", ch}, {"e", bobMsg.ID}, {"p", bob.Pub}}, "+")
	all := nostr.Tags{{"relay", "ALL_RELAYS"}}

	// Attacks: relayed by bob (WebSocket and HTTP), another relay named.
	carol, _ := loggedIn(t, r) // nothing stored here
	relayedAlice := refused(t, brl, signed(t, alice, 62, all, ""))
	wantPrefix(t, relayedAlice, "restricted:")
	relayedCarol := refused(t, brl, signed(t, carol, 62, all, ""))
	if strings.ReplaceAll(relayedCarol, carol.Pub[:12], "K") != strings.ReplaceAll(relayedAlice, alice.Pub[:12], "K") {
		t.Errorf("a relayed request reads differently for a key with data (%q) and one without (%q)", relayedAlice, relayedCarol)
	}
	if a := newBridge(t, r, bob).submit(signed(t, alice, 62, all, "")); a.Accepted {
		t.Fatal("POST /events took alice's request to vanish from bob")
	}
	wantPrefix(t, refused(t, rl, signed(t, alice, 62, nostr.Tags{{"relay", "wss://other.example"}}, "")), "invalid:")
	b := newBridge(t, r, bob)
	if got := b.query(map[string]any{"authors": []string{alice.Pub}}); len(got) < 3 {
		t.Fatalf("a refused request deleted alice's events: %d left", len(got))
	}

	// From alice over WebSocket, naming this relay by its URL.
	if err := rl.Publish(ctxT(t), signed(t, alice, 62, nostr.Tags{{"relay", r.WSURL}}, "bye")); err != nil {
		t.Fatalf("alice's request to vanish: %v", err)
	}
	got := b.query(map[string]any{"authors": []string{alice.Pub}})
	if len(got) != 1 || got[0].Kind != 62 {
		t.Fatalf("alice's events after vanishing: %d, want the tombstone only", len(got))
	}
	if evs, err := brl.QuerySync(ctxT(t), nostr.Filter{Authors: []string{alice.Pub}, Kinds: []int{7, 9}}); err != nil || len(evs) != 0 {
		t.Fatalf("REQ still serves alice's events: %d (%v)", len(evs), err)
	}
	if !hasID(b.query(map[string]any{"ids": []string{bobMsg.ID}}), bobMsg.ID) {
		t.Fatal("bob's message went with alice")
	}
	if status, _ := download(t, r.HTTPURL+"/"+hash, &bob); status != http.StatusNotFound {
		t.Fatalf("alice's blob is still served: %d", status)
	}
	obj := r.S3URL + "/" + MediaBucket + "/" + blossom.BlobKey(r.App.Config.DefaultCommunity, hash)
	if resp, err := http.Head(obj); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("alice's blob object is still in the bucket: %v %v", resp.Status, err)
	}
	// Her older message does not come back through either door.
	wantPrefix(t, refused(t, rl, aliceMsg), "blocked:")
	if a := newBridge(t, r, alice).submit(aliceMsg); a.Accepted || !strings.HasPrefix(a.Message, "blocked:") {
		t.Fatalf("POST /events re-published a vanished event: %+v", a)
	}

	// Over POST /events with NIP-98: carol's OK says what went.
	dave, drl := loggedIn(t, r)
	publish(t, drl, dave, 1, nil, "dave's note")
	a := newBridge(t, r, dave).submit(signed(t, dave, 62, nostr.Tags{{"relay", strings.Replace(r.WSURL, "127.0.0.1", "localhost", 1)}}, ""))
	if !a.Accepted || !strings.HasPrefix(a.Message, "vanished: 1 events") {
		t.Fatalf("POST /events request to vanish: %+v", a)
	}
}

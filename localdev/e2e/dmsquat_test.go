package e2e

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Issue 36, measured: Carol sent a 9007 at the id of Alice and Bob's DM (a
// public function of their keys) before they opened it; Alice's 41010
// then joined Carol's channel, and Carol's /query read their messages.
// Now the DM id space is the DM flows' alone: Carol's 9007 is refused
// (the same answer before and after the DM exists: no oracle), the 41010
// opens a DM of Alice and Bob only, and Carol reads nothing of it.
func TestDMCannotBeTakenOverByAThirdKey(t *testing.T) {
	r := newRelay(t)
	alice, ws := loggedIn(t, r)
	bob, carol := testkit.NewKey(t), testkit.NewKey(t)
	ba, bb, bc := newBridge(t, r, alice), newBridge(t, r, bob), newBridge(t, r, carol)
	keys, err := nip29.DMSet(map[string]bool{alice.Pub: true, bob.Pub: true})
	if err != nil {
		t.Fatal(err)
	}
	dm := nip29.DMChannelID(keys)

	squat := func() eventsAnswer {
		return bc.submit(signed(t, carol, 9007, nostr.Tags{{"h", dm}, {"name", "DM"}, {"channel_type", "dm"}, {"visibility", "open"}}, ""))
	}
	first := squat()
	if first.Accepted || !strings.HasPrefix(first.Message, "invalid: group id "+dm+" is reserved for DMs") {
		t.Fatalf("carol's 9007 at the DM id: %+v", first)
	}

	publish(t, ws, alice, 41010, nostr.Tags{{"p", bob.Pub}}, "")
	secret := signed(t, alice, 9, nostr.Tags{{"h", dm}}, "for bob only")
	ba.accept(secret)
	bb.accept(signed(t, bob, 9, nostr.Tags{{"h", dm}}, "for alice only"))
	if got := bb.query(map[string]any{"kinds": []int{9}, "#h": []string{dm}}); len(got) != 2 {
		t.Fatalf("bob reads %d of the DM's 2 messages", len(got))
	}
	members := stateHead(t, ba, 39002, dm)
	if _, in := roleIn39002(members, carol.Pub); in {
		t.Fatal("carol is in alice and bob's DM")
	}

	// Carol: nothing of theirs, and the same answers as before.
	if got := bc.query(map[string]any{"#h": []string{dm}}); len(got) != 0 {
		t.Fatalf("carol's /query #h of the DM returns %d events", len(got))
	}
	if got := bc.query(map[string]any{"kinds": []int{39000, 39001, 39002, 39003}, "#d": []string{dm}}); len(got) != 0 {
		t.Fatal("carol reads the DM's state")
	}
	if got := bc.query(map[string]any{"ids": []string{secret.ID}}); len(got) != 0 {
		t.Fatal("carol reads alice's DM message by id")
	}
	if n := bc.count(map[string]any{"#h": []string{dm}}); n != 0 {
		t.Fatalf("carol counts %d events of the DM", n)
	}
	// The same answer (the event id differs once a second has passed).
	if again := squat(); again.Accepted != first.Accepted || again.Message != first.Message {
		t.Fatalf("carol's 9007 once the DM exists: %+v, before: %+v", again, first)
	}
	missing := createChannelID()
	for _, kind := range []int{9008, 9021, 9022, 9002} {
		at := bc.submit(signed(t, carol, kind, nostr.Tags{{"h", dm}}, ""))
		not := bc.submit(signed(t, carol, kind, nostr.Tags{{"h", missing}}, ""))
		if at.Accepted || strings.ReplaceAll(at.Message, dm, "<id>") != strings.ReplaceAll(not.Message, missing, "<id>") {
			t.Fatalf("kind %d at the DM: %q, at a missing id: %q", kind, at.Message, not.Message)
		}
	}
}

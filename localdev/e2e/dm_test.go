package e2e

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Buzz's DM channels played as a Buzz client does: open a DM (41010) over
// the WebSocket, find it from the relay-signed 44100 and 39002, talk in it
// over the bridge, add a member (41011: the DM of the larger set) and hide
// it (41012: the hider's 30622, NIP-DV). A third key can read none of it
// and cannot learn the DM exists.
func TestBuzzDMChannels(t *testing.T) {
	r := newRelay(t)
	alice, ws := loggedIn(t, r)
	bob, carol := testkit.NewKey(t), testkit.NewKey(t)
	ba, bb, bc := newBridge(t, r, alice), newBridge(t, r, bob), newBridge(t, r, carol)

	publish(t, ws, alice, 41010, nostr.Tags{{"p", bob.Pub}}, "")
	dmOf := func(b *bridge, who user, not string) string {
		t.Helper()
		for _, n := range b.query(map[string]any{"kinds": []int{44100}, "#p": []string{who.Pub}}) {
			if h := n.Tags.GetFirst([]string{"h"}); h != nil && (*h)[1] != not {
				return (*h)[1]
			}
		}
		t.Fatalf("no 44100 for %s", who.Pub[:8])
		return ""
	}
	dm := dmOf(bb, bob, "")
	if got := dmOf(ba, alice, ""); got != dm {
		t.Fatalf("alice's 44100 names %s, bob's %s", got, dm)
	}
	// Buzz clients list their DMs from the 39000s and 39002s naming them.
	for _, b := range []*bridge{ba, bb} {
		for _, k := range []int{39000, 39002} {
			found := false
			for _, m := range b.query(map[string]any{"kinds": []int{k}, "#p": []string{b.u.Pub}}) {
				if d := m.Tags.GetD(); d == dm {
					found = true
				}
			}
			if !found {
				t.Fatalf("%s's %d look-up does not find the DM", b.u.Pub[:8], k)
			}
		}
		if got := bc.query(map[string]any{"kinds": []int{39000, 39002}, "#p": []string{b.u.Pub}}); len(got) != 0 {
			t.Fatalf("carol finds %s's DM state by #p", b.u.Pub[:8])
		}
	}
	meta := stateHead(t, bb, 39000, dm)
	if meta.Tags.GetFirst([]string{"t", "dm"}) == nil || meta.Tags.GetFirst([]string{"hidden"}) == nil {
		t.Fatalf("the DM's 39000: %v", meta.Tags)
	}

	hi := signed(t, alice, 9, nostr.Tags{{"h", dm}}, "hi bob")
	ba.accept(hi)
	reply := signed(t, bob, 9, nostr.Tags{{"h", dm}}, "hi alice")
	bb.accept(reply)
	for _, b := range []*bridge{ba, bb} {
		if got := b.query(map[string]any{"kinds": []int{9}, "#h": []string{dm}}); !hasID(got, hi.ID) || !hasID(got, reply.ID) {
			t.Fatalf("%s reads %d of the DM's 2 messages", b.u.Pub[:8], len(got))
		}
	}

	// Carol: nothing, not even that the DM exists.
	outside := func() {
		t.Helper()
		if got := bc.query(map[string]any{"#h": []string{dm}}); len(got) != 0 {
			t.Fatalf("carol reads %d events of the DM", len(got))
		}
		if got := bc.query(map[string]any{"kinds": []int{39000, 39001, 39002, 39003}, "#d": []string{dm}}); len(got) != 0 {
			t.Fatalf("carol reads the DM's state: %v", idsOf(got))
		}
		if got := bc.query(map[string]any{"ids": []string{hi.ID, reply.ID}}); len(got) != 0 {
			t.Fatal("carol reads a DM message by id")
		}
		if n := bc.count(map[string]any{"#h": []string{dm}}); n != 0 {
			t.Fatalf("carol counts %d events of the DM", n)
		}
		a := bc.submit(signed(t, carol, 9, nostr.Tags{{"h", dm}}, "let me in"))
		if a.Accepted || !strings.Contains(a.Message, "does not exist") {
			t.Fatalf("carol writing to the DM: %+v", a)
		}
	}
	outside()

	// Add member: bob brings carol in; the DM of the three is new, the
	// first one keeps its two participants.
	bb.accept(signed(t, bob, 41011, nostr.Tags{{"h", dm}, {"p", carol.Pub}}, ""))
	group := dmOf(bc, carol, dm)
	if group == dm {
		t.Fatal("add member changed the first DM's participants")
	}
	for _, b := range []*bridge{ba, bb, bc} {
		m := stateHead(t, b, 39002, group)
		for _, k := range []user{alice, bob, carol} {
			if _, ok := roleIn39002(m, k.Pub); !ok {
				t.Fatalf("the group DM's 39002 misses %s", k.Pub[:8])
			}
		}
	}
	hey := signed(t, carol, 9, nostr.Tags{{"h", group}}, "hey both")
	bc.accept(hey)
	if !hasID(ba.query(map[string]any{"#h": []string{group}, "kinds": []int{9}}), hey.ID) {
		t.Fatal("alice does not read the group DM")
	}
	outside()

	// Hide: bob's 30622 names the DM, readable only by bob; alice still
	// sees it in her list.
	bb.accept(signed(t, bob, 41012, nostr.Tags{{"h", dm}}, ""))
	vis := bb.query(map[string]any{"kinds": []int{30622}, "#p": []string{bob.Pub}})
	if len(vis) != 1 || vis[0].PubKey != meta.PubKey || vis[0].Tags.GetD() != bob.Pub || vis[0].Tags.GetFirst([]string{"h", dm}) == nil {
		t.Fatalf("bob's 30622: %v", vis)
	}
	for _, b := range []*bridge{ba, bc} {
		if got := b.query(map[string]any{"kinds": []int{30622}, "#p": []string{b.u.Pub}}); len(got) != 0 {
			t.Fatalf("%s has a 30622", b.u.Pub[:8])
		}
		if got := b.query(map[string]any{"ids": []string{vis[0].ID}}); len(got) != 0 {
			t.Fatalf("%s reads bob's 30622 by id", b.u.Pub[:8])
		}
	}
	// Opening it again shows it: the 30622 is replaced by an empty one.
	bb.accept(signed(t, bob, 41010, nostr.Tags{{"p", alice.Pub}}, ""))
	vis = bb.query(map[string]any{"kinds": []int{30622}, "#p": []string{bob.Pub}})
	if len(vis) != 1 || vis[0].Tags.GetFirst([]string{"h"}) != nil {
		t.Fatalf("bob's 30622 after reopening: %v", vis)
	}
}

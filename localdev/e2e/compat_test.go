package e2e

// One test per item of issue 10: what a Buzz client (desktop, SDK, agents)
// relies on beyond the two spec documents, through the public contract.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// ownedChannel is a fresh relay with a key, its bridge client and a channel
// of visibility that key created.
func ownedChannel(t *testing.T, visibility string) (*Relay, user, *bridge, string) {
	t.Helper()
	r := newRelay(t)
	owner := testkit.NewKey(t)
	b := newBridge(t, r, owner)
	return r, owner, b, newChannel(t, b, visibility)
}

// newChannel creates a channel of visibility as u over the bridge.
func newChannel(t *testing.T, b *bridge, visibility string) string {
	t.Helper()
	id := createChannelID()
	b.accept(signed(t, b.u, 9007, nostr.Tags{{"h", id}, {"name", "ch-" + id[:8]}, {"visibility", visibility}}, ""))
	return id
}

// newMember is a fresh key that b's key added to ch (a bare 9000), with
// its bridge client.
func newMember(t *testing.T, r *Relay, b *bridge, ch string) (user, *bridge) {
	t.Helper()
	u := testkit.NewKey(t)
	b.accept(signed(t, b.u, 9000, nostr.Tags{{"h", ch}, {"p", u.Pub}}, ""))
	return u, newBridge(t, r, u)
}

// openChannel starts a relay where alice has created an open channel ch;
// ba is her bridge client.
func openChannel(t *testing.T) (r *Relay, alice user, ba *bridge, ch string) {
	t.Helper()
	r, alice = newRelay(t), testkit.NewKey(t)
	ba = newBridge(t, r, alice)
	return r, alice, ba, newChannel(t, ba, "open")
}

// roles is pk's role in ch as the 39001 says ("" when not an admin) and as
// the 39002 says at index 3 (ok false when not a member).
func roles(t *testing.T, b *bridge, ch, pk string) (admins, members string, ok bool) {
	t.Helper()
	admins = roleIn39001(stateHead(t, b, 39001, ch), pk)
	members, ok = roleIn39002(stateHead(t, b, 39002, ch), pk)
	return admins, members, ok
}

// Item 1: ["role", r] grants r, as does NIP-29's ["p", key, r].
func TestCompatRoleTagGrantsRole(t *testing.T) {
	r, alice, ba, ch := ownedChannel(t, "private")
	bob, carol := testkit.NewKey(t), testkit.NewKey(t)
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", bob.Pub}, {"role", "admin"}}, ""))
	if a, m, _ := roles(t, ba, ch, bob.Pub); a != "admin" || m != "admin" {
		t.Fatalf("after 9000 with a role tag: 39001 %q, 39002 %q, want admin", a, m)
	}
	// The grant is real: bob may now add users.
	newBridge(t, r, bob).accept(signed(t, bob, 9000, nostr.Tags{{"h", ch}, {"p", carol.Pub, "admin"}}, ""))
	if a, _, _ := roles(t, ba, ch, carol.Pub); a != "admin" {
		t.Fatalf("NIP-29 form: carol is %q, want admin", a)
	}
	a := ba.submit(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", carol.Pub, "member"}, {"role", "admin"}}, ""))
	if a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
		t.Fatalf("disagreeing roles: %+v, want invalid:", a)
	}
}

// Item 2: a 9000 without a role keeps an existing member's role and adds a
// new user as member.
func TestCompatBarePutUserKeepsRole(t *testing.T) {
	_, alice, ba, ch := ownedChannel(t, "private")
	bob, carol := testkit.NewKey(t), testkit.NewKey(t)
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", bob.Pub, "admin"}}, ""))
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", bob.Pub}}, ""))
	if a, m, _ := roles(t, ba, ch, bob.Pub); a != "admin" || m != "admin" {
		t.Fatalf("bare 9000 changed bob's role: 39001 %q, 39002 %q", a, m)
	}
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", alice.Pub}}, ""))
	if a, _, _ := roles(t, ba, ch, alice.Pub); a != "owner" {
		t.Fatalf("bare 9000 demoted the owner to %q", a)
	}
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", carol.Pub}}, ""))
	if a, m, ok := roles(t, ba, ch, carol.Pub); a != "" || m != "member" || !ok {
		t.Fatalf("new user by bare 9000: 39001 %q, 39002 %q %v, want a member", a, m, ok)
	}
}

// Item 3: a member's bare 9000 naming itself is an idempotent re-add.
func TestCompatSelfReAdd(t *testing.T) {
	r, alice, ba, ch := ownedChannel(t, "private")
	bob, eve := testkit.NewKey(t), testkit.NewKey(t)
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", bob.Pub}}, ""))
	rb := dial(t, r)
	login(t, rb, bob)
	publish(t, rb, bob, 9000, nostr.Tags{{"h", ch}, {"p", bob.Pub}}, "")
	if a, m, ok := roles(t, ba, ch, bob.Pub); a != "" || m != "member" || !ok {
		t.Fatalf("after the re-add bob is %q/%q %v, want a member", a, m, ok)
	}
	// A non-member cannot add itself that way.
	re := dial(t, r)
	login(t, re, eve)
	wantPrefix(t, refused(t, re, signed(t, eve, 9000, nostr.Tags{{"h", ch}, {"p", eve.Pub}}, "")), "restricted:")
}

// Item 4: 39002 lists ["p", key, <relay hint>, role]; 39001 keeps
// ["p", key, role].
func TestCompatMembersCarryRoles(t *testing.T) {
	_, alice, ba, ch := ownedChannel(t, "open")
	bob, carol := testkit.NewKey(t), testkit.NewKey(t)
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", bob.Pub, "admin"}}, ""))
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", ch}, {"p", carol.Pub}}, ""))
	members := stateHead(t, ba, 39002, ch)
	for pk, want := range map[string]string{alice.Pub: "owner", bob.Pub: "admin", carol.Pub: "member"} {
		if got, ok := roleIn39002(members, pk); !ok || got != want {
			t.Errorf("39002 role of %s: %q %v, want %q", pk[:8], got, ok, want)
		}
	}
	admins := stateHead(t, ba, 39001, ch)
	if roleIn39001(admins, alice.Pub) != "owner" || roleIn39001(admins, bob.Pub) != "admin" || roleIn39001(admins, carol.Pub) != "" {
		t.Errorf("39001 tags %v", admins.Tags)
	}
}

// membershipContent is the JSON a Buzz client parses from 44100/44101.
type membershipContent struct {
	Type      string `json:"type"`
	ChannelID string `json:"channel_id"`
}

func parseMembership(t *testing.T, ev nostr.Event) membershipContent {
	t.Helper()
	var c membershipContent
	if err := json.Unmarshal([]byte(ev.Content), &c); err != nil {
		t.Fatalf("kind %d content %q is not JSON", ev.Kind, ev.Content)
	}
	return c
}

// Item 5: 44100/44101 content names the change and the channel.
func TestCompatMembershipNotificationContent(t *testing.T) {
	r, alice, ba, ch := ownedChannel(t, "private")
	bob, bb := newMember(t, r, ba, ch)
	ba.accept(signed(t, alice, 9001, nostr.Tags{{"h", ch}, {"p", bob.Pub}}, ""))
	for kind, typ := range map[int]string{44100: "member_added", 44101: "member_removed"} {
		evs := bb.query(map[string]any{"kinds": []int{kind}, "#p": []string{bob.Pub}})
		if len(evs) != 1 {
			t.Fatalf("kind %d for bob: %d events", kind, len(evs))
		}
		checkRelaySigned(t, r, evs[0])
		if c := parseMembership(t, evs[0]); c.Type != typ || c.ChannelID != ch {
			t.Fatalf("kind %d content %+v, want %s of %s", kind, c, typ, ch)
		}
	}
}

// Item 6: the thread panel's aux closure covers the root too.
func TestCompatThreadAuxIncludesRoot(t *testing.T) {
	r := newRelay(t)
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "open")
	root := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "root")
	ba.accept(root)
	reply := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"e", root.ID, "", "reply"}}, "reply")
	ba.accept(reply)
	bb := newBridge(t, r, bob)
	onRoot := signed(t, bob, 7, nostr.Tags{{"e", root.ID}, {"p", alice.Pub}}, "+")
	bb.accept(onRoot)
	edit := signed(t, alice, 40003, nostr.Tags{{"e", root.ID}, {"h", ch}}, "root, edited")
	ba.accept(edit)
	onReply := signed(t, bob, 7, nostr.Tags{{"e", reply.ID}, {"p", alice.Pub}}, "+")
	bb.accept(onReply)
	unreact := signed(t, bob, 5, nostr.Tags{{"e", onRoot.ID}}, "")
	bb.accept(unreact)
	evs := bb.query(map[string]any{"#e": []string{root.ID}, "depth_limit": 10, "include_aux": true})
	for _, want := range []nostr.Event{reply, onReply, edit, unreact} {
		if !hasID(evs, want.ID) {
			t.Errorf("thread panel with include_aux lacks kind %d %q", want.Kind, want.Content)
		}
	}
	if hasID(evs, onRoot.ID) {
		t.Error("a deleted reaction on the root came back")
	}
}

// Item 7: a 39005 goes only to subscriptions asking for kind 39005, after
// every change of the summary: a reply, and a reply's deletion.
func TestCompatLiveSummaryByKind(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	ra := dial(t, r)
	login(t, ra, alice)
	ch := createChannel(t, ra, alice, "open")
	root := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "root")

	rc := authedRaw(t, r, testkit.NewKey(t))
	rc.sendJSON([]any{"REQ", "generic", map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 0}})
	rc.expect("EOSE")
	rc.sendJSON([]any{"REQ", "buzz", map[string]any{"kinds": []int{39005}, "#h": []string{ch}, "limit": 0}})
	rc.expect("EOSE")

	reply := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}, {"e", root.ID, "", "reply"}}, "reply")
	got := rc.events(2)
	if ev := got["generic"]; ev.ID != reply.ID {
		t.Fatalf("generic got kind %d, want the reply", ev.Kind)
	}
	if ev := got["buzz"]; ev.Kind != 39005 || ev.Tags.GetFirst([]string{"e", root.ID}) == nil || replyCount(t, ev) != 1 {
		t.Fatalf("buzz got kind %d, want the root's 39005 of 1 reply", ev.Kind)
	}
	checkRelaySigned(t, r, got["buzz"])
	publish(t, ra, alice, 5, nostr.Tags{{"e", reply.ID}}, "")
	sub, ev := rc.event()
	if sub != "buzz" || ev.Kind != 39005 || ev.Tags.GetFirst([]string{"e", root.ID}) == nil {
		t.Fatalf("after the deletion got %s kind %d, want the root's 39005 on buzz", sub, ev.Kind)
	}
	checkRelaySigned(t, r, ev)
	if n := replyCount(t, ev); n != 0 {
		t.Fatalf("39005 after the last reply's deletion: reply_count %d, want 0", n)
	}
	// generic saw no 39005: its next event is the next message.
	next := publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "next")
	if sub, ev := rc.event(); sub != "generic" || ev.ID != next.ID {
		t.Fatalf("got %s kind %d, want the next message on generic", sub, ev.Kind)
	}
}

// Item 8: a REQ gets every stored event matching any of its filters, each
// once, all before EOSE; read newest first (created_at DESC, id ASC)
// across its filters, but posted concurrently, so they may arrive in
// another order and the client sorts them.
func TestCompatReqNewestFirst(t *testing.T) {
	r, alice, ba, ch := openChannel(t)
	now := nostr.Now()
	var msgs, reacts []nostr.Event
	for i := range 12 {
		// Pairs share a second, so the id breaks the tie.
		ev := signedAt(t, alice, now-200+nostr.Timestamp(i/2), 9, nostr.Tags{{"h", ch}}, fmt.Sprint("m", i))
		ba.accept(ev)
		msgs = append(msgs, ev)
	}
	for i := range 6 {
		ev := signedAt(t, alice, now-100+nostr.Timestamp(i), 7, nostr.Tags{{"e", msgs[i].ID}}, "+")
		ba.accept(ev)
		reacts = append(reacts, ev)
	}
	rc := authedRaw(t, r, alice)
	// The older filter first: the order must not follow the filters.
	rc.sendJSON([]any{"REQ", "s", map[string]any{"kinds": []int{9}, "#h": []string{ch}},
		map[string]any{"kinds": []int{7}, "#h": []string{ch}}})
	var got []nostr.Event
	for {
		parts := rc.read()
		if str(t, parts[0]) == "EOSE" {
			break
		}
		var ev nostr.Event
		if str(t, parts[0]) != "EVENT" || json.Unmarshal(parts[2], &ev) != nil {
			t.Fatalf("got %s before EOSE", joinRaw(parts))
		}
		got = append(got, ev)
	}
	if len(got) != len(msgs)+len(reacts) {
		t.Fatalf("%d events before EOSE (%d of kind 7), want %d", len(got), len(ofKind(got, 7)), len(msgs)+len(reacts))
	}
	seen := map[string]bool{}
	for _, ev := range got {
		if seen[ev.ID] {
			t.Fatalf("event %s twice before EOSE", ev.ID[:8])
		}
		seen[ev.ID] = true
	}
	want := append(append([]nostr.Event(nil), msgs...), reacts...)
	sortNewestFirst(want)
	sortNewestFirst(got)
	for i := range got {
		if got[i].ID != want[i].ID {
			t.Fatalf("event %d in the read's order is %s, want %s", i, got[i].ID[:8], want[i].ID[:8])
		}
	}
}

// Item 9: the window applies every constraint of its filter (tags,
// search) before the limit and has_more.
func TestCompatWindowAppliesTagsAndSearch(t *testing.T) {
	_, alice, ba, ch := openChannel(t)
	now := nostr.Now()
	var tagged, found []nostr.Event
	for i := range 6 {
		tags := nostr.Tags{{"h", ch}}
		content := "plain words"
		if i%2 == 0 {
			tags = append(tags, nostr.Tag{"t", "release"})
		}
		if i%3 == 0 {
			content = "banana bread"
		}
		ev := signedAt(t, alice, now-60+nostr.Timestamp(i), 9, tags, content)
		ba.accept(ev)
		if i%2 == 0 {
			tagged = append([]nostr.Event{ev}, tagged...)
		}
		if i%3 == 0 {
			found = append([]nostr.Event{ev}, found...)
		}
	}
	// Newer rows without the tag must not fill the page or has_more.
	ba.accept(signed(t, alice, 9, nostr.Tags{{"h", ch}}, "newest, untagged"))
	for name, c := range map[string]struct {
		extra map[string]any
		want  []nostr.Event
	}{
		"#t":     {map[string]any{"#t": []string{"release"}}, tagged},
		"search": {map[string]any{"search": "banana"}, found},
		"#p":     {map[string]any{"#p": []string{alice.Pub}}, nil},
	} {
		rows, pages := ba.allPages(ch, 1, c.extra)
		if strings.Join(idsOf(rows), ",") != strings.Join(idsOf(c.want), ",") {
			t.Errorf("%s: window rows %d over %d pages, want the %d matching ones", name, len(rows), pages, len(c.want))
		}
		if len(c.want) > 0 && pages != len(c.want) {
			t.Errorf("%s: %d pages of one row for %d matches: has_more counted other rows", name, pages, len(c.want))
		}
	}
}

// Item 10: channel ids compare case-insensitively, are stored lowercase,
// and the 39006 d tag is lowercase.
func TestCompatChannelIDsAnyCase(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	upper := strings.ToUpper(uuid.NewString()) // a UUID: the case rule is theirs
	lower := strings.ToLower(upper)
	ba.accept(signed(t, alice, 9007, nostr.Tags{{"h", upper}, {"name", "upper"}}, ""))
	meta := stateHead(t, ba, 39000, lower)
	if meta.Tags.GetD() != lower {
		t.Fatalf("39000 d %q, want %q", meta.Tags.GetD(), lower)
	}
	rc := authedRaw(t, r, alice)
	rc.sendJSON([]any{"REQ", "live", map[string]any{"kinds": []int{9}, "#h": []string{upper}, "limit": 0}})
	rc.expect("EOSE")
	msg := signed(t, alice, 9, nostr.Tags{{"h", upper}}, "shouted")
	ba.accept(msg)
	if _, ev := rc.event(); ev.ID != msg.ID {
		t.Fatalf("live #h in upper case got %s", ev.ID)
	}
	for _, h := range []string{upper, lower} {
		if evs := ba.query(map[string]any{"kinds": []int{9}, "#h": []string{h}}); len(evs) != 1 || evs[0].ID != msg.ID {
			t.Fatalf("/query #h %s: %d events", h, len(evs))
		}
	}
	// parseWindow checks the 39006 d against the lower-case channel.
	if p := ba.window(upper, 10, nil, nil); len(p.rows) != 1 {
		t.Fatalf("window with #h in upper case: %d rows", len(p.rows))
	}
	evs := ba.query(windowRequest(upper, 10, nil, nil))
	if b := ofKind(evs, 39006); len(b) != 1 || b[0].Tags.GetFirst([]string{"h", lower}) == nil {
		t.Fatalf("39006 h is not the lower-case channel id")
	}
}

// Item 11: a row without thread metadata (imported) is top-level.
func TestCompatRowsWithoutThreadMetadataAreTopLevel(t *testing.T) {
	r, alice, ba, ch := openChannel(t)
	root := signedAt(t, alice, nostr.Now()-10, 9, nostr.Tags{{"h", ch}}, "root")
	ba.accept(root)
	reply := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"e", root.ID, "", "reply"}}, "reply")
	ba.accept(reply)
	if p := ba.window(ch, 10, nil, nil); hasID(p.rows, reply.ID) {
		t.Fatal("a reply with thread metadata is a window row")
	}
	// An import that brought the event without its thread row.
	if _, err := testkit.OpenDB(t, r.DSN).Exec(ctxT(t), `DELETE FROM thread_metadata WHERE event_id = $1`, reply.ID); err != nil {
		t.Fatal(err)
	}
	p := ba.window(ch, 1, nil, nil)
	if len(p.rows) != 1 || p.rows[0].ID != reply.ID || !p.hasMore {
		t.Fatalf("head page %v has_more %v, want the row without thread metadata, then more", idsOf(p.rows), p.hasMore)
	}
	if p = ba.window(ch, 1, p.next, nil); len(p.rows) != 1 || p.rows[0].ID != root.ID || p.hasMore {
		t.Fatalf("second page %v has_more %v, want the root and no more", idsOf(p.rows), p.hasMore)
	}
}

// Item 12: a deletion of a deletion is refused and the first one stays.
func TestCompatDeletionOfDeletion(t *testing.T) {
	_, alice, ba, ch := openChannel(t)
	msg := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "oops")
	ba.accept(msg)
	del := signed(t, alice, 5, nostr.Tags{{"e", msg.ID}}, "")
	ba.accept(del)
	for _, again := range []nostr.Event{
		signed(t, alice, 5, nostr.Tags{{"e", del.ID}}, ""),
		signed(t, alice, 9005, nostr.Tags{{"h", ch}, {"e", del.ID}}, ""),
	} {
		if a := ba.submit(again); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
			t.Fatalf("kind %d of a deletion: %+v, want invalid:", again.Kind, a)
		}
	}
	if evs := ba.query(map[string]any{"ids": []string{del.ID, msg.ID}}); len(evs) != 1 || evs[0].ID != del.ID {
		t.Fatalf("after the refused deletions: %v, want the first deletion only", idsOf(evs))
	}
	if p := ba.window(ch, 10, nil, nil); len(p.rows) != 0 {
		t.Fatal("the deleted message came back")
	}
}

// Item 13: a member removed from a private channel cannot delete its own
// messages there, and is told what a missing target gets (Buzz's
// removed_author_deletion_does_not_reveal_target; issue 51).
func TestCompatRemovedMemberCannotDelete(t *testing.T) {
	r, alice, ba, ch := ownedChannel(t, "private")
	bob, bb := newMember(t, r, ba, ch)
	kept := signed(t, bob, 9, nostr.Tags{{"h", ch}}, "kept")
	bb.accept(kept)
	ba.accept(signed(t, alice, 9001, nostr.Tags{{"h", ch}, {"p", bob.Pub}}, ""))
	for _, del := range []nostr.Event{
		signed(t, bob, 5, nostr.Tags{{"e", kept.ID}}, ""),
		signed(t, bob, 9005, nostr.Tags{{"h", ch}, {"e", kept.ID}}, ""),
	} {
		if a := bb.submit(del); a.Accepted || a.Message != ingest.ErrDeletionTarget.Error() {
			t.Fatalf("kind %d by a removed member: %+v, want %q", del.Kind, a, ingest.ErrDeletionTarget)
		}
	}
	if evs := ba.query(map[string]any{"ids": []string{kept.ID}}); len(evs) != 1 {
		t.Fatal("the removed member's message was deleted")
	}
}

// Item 14: ephemeral events are delivered live to subscriptions that may
// read them and never stored.
func TestCompatEphemeral(t *testing.T) {
	r := newRelay(t)
	alice, bob, eve := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	open := newChannel(t, ba, "open")
	private := newChannel(t, ba, "private")
	ba.accept(signed(t, alice, 9000, nostr.Tags{{"h", private}, {"p", bob.Pub}}, ""))

	rb := authedRaw(t, r, bob)
	rb.sendJSON([]any{"REQ", "typing", map[string]any{"kinds": []int{20002}}})
	rb.expect("EOSE")
	re := authedRaw(t, r, eve)
	re.sendJSON([]any{"REQ", "typing", map[string]any{"kinds": []int{20002}}})
	re.expect("EOSE")

	ra := dial(t, r)
	login(t, ra, alice)
	secret := publish(t, ra, alice, 20002, nostr.Tags{{"h", private}}, "typing in private")
	if _, ev := rb.event(); ev.ID != secret.ID {
		t.Fatalf("member got %s, want the private ephemeral event", ev.ID)
	}
	public := publish(t, ra, alice, 20002, nostr.Tags{{"h", open}}, "typing in open")
	if _, ev := re.event(); ev.ID != public.ID {
		t.Fatalf("non-member got %q first, want the open channel's event (and never the private one)", ev.Content)
	}
	if _, ev := rb.event(); ev.ID != public.ID {
		t.Fatalf("member got %s, want the open ephemeral event", ev.ID)
	}
	// Over the bridge too.
	presence := signed(t, alice, 20002, nostr.Tags{{"h", open}}, "typing over HTTP")
	ba.accept(presence)
	if _, ev := rb.event(); ev.ID != presence.ID {
		t.Fatalf("member got %s, want the ephemeral event sent over HTTP", ev.ID)
	}
	if evs := ba.query(map[string]any{"kinds": []int{20002}}); len(evs) != 0 {
		t.Fatalf("%d ephemeral events were stored", len(evs))
	}
	// A non-member may not send one into a private channel.
	rev := dial(t, r)
	login(t, rev, eve)
	wantPrefix(t, refused(t, rev, signed(t, eve, 20002, nostr.Tags{{"h", private}}, "")), "restricted:")
}

// Item 15: gift wraps, signed by a throwaway key, are stored, readable and
// countable only by their p recipient, never searchable.
func TestCompatGiftWrap(t *testing.T) {
	r := newRelay(t)
	alice, bob, eve := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	wrap := func(content string, age time.Duration) nostr.Event {
		return signedAt(t, testkit.NewKey(t), nostr.Timestamp(time.Now().Add(-age).Unix()), 1059,
			nostr.Tags{{"p", bob.Pub}}, content)
	}
	// Live: to the recipient only.
	rb := authedRaw(t, r, bob)
	rb.sendJSON([]any{"REQ", "dm", map[string]any{"kinds": []int{1059}, "#p": []string{bob.Pub}, "limit": 0}})
	rb.expect("EOSE")
	re := authedRaw(t, r, eve)
	re.sendJSON([]any{"REQ", "all", map[string]any{"kinds": []int{1059, 9}, "limit": 0}})
	re.expect("EOSE")
	// Over the bridge, NIP-59's randomized created_at (a day back).
	overHTTP := wrap("sealed lunch", 24*time.Hour)
	newBridge(t, r, alice).accept(overHTTP)
	if _, ev := rb.event(); ev.ID != overHTTP.ID {
		t.Fatalf("recipient got %s live, want the gift wrap", ev.ID)
	}
	// Over WebSocket.
	ra := dial(t, r)
	login(t, ra, alice)
	overWS := wrap("sealed dinner", time.Minute)
	if err := ra.Publish(ctxT(t), overWS); err != nil {
		t.Fatalf("gift wrap over WebSocket: %v", err)
	}
	if _, ev := rb.event(); ev.ID != overWS.ID {
		t.Fatalf("recipient got %s live, want the second gift wrap", ev.ID)
	}
	bb, be := newBridge(t, r, bob), newBridge(t, r, eve)
	ch := newChannel(t, bb, "open")
	marker := signed(t, bob, 9, nostr.Tags{{"h", ch}}, "marker")
	bb.accept(marker)
	if _, ev := re.event(); ev.ID != marker.ID {
		t.Fatalf("another key got kind %d live before the marker", ev.Kind)
	}
	f := map[string]any{"kinds": []int{1059}}
	if evs := bb.query(f); len(evs) != 2 || !hasID(evs, overHTTP.ID) || !hasID(evs, overWS.ID) {
		t.Fatalf("recipient reads %d gift wraps, want 2", len(evs))
	}
	if evs := be.query(f); len(evs) != 0 {
		t.Fatalf("another key reads %d gift wraps", len(evs))
	}
	if evs := be.query(map[string]any{"ids": []string{overHTTP.ID}}); len(evs) != 0 {
		t.Fatal("another key reads a gift wrap by id")
	}
	if n := be.count(f); n != 0 {
		t.Fatalf("COUNT for another key: %d", n)
	}
	if n := bb.count(f); n != 2 {
		t.Fatalf("COUNT for the recipient: %d, want 2", n)
	}
	if evs := bb.query(map[string]any{"search": "sealed"}); len(evs) != 0 {
		t.Fatal("a gift wrap is searchable")
	}
	if a := newBridge(t, r, alice).submit(signed(t, testkit.NewKey(t), 1059, nostr.Tags{}, "x")); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
		t.Fatalf("gift wrap without p: %+v, want invalid:", a)
	}
}

// Item 16: a search REQ is one-shot; mixing search with other filters is
// refused on both paths.
func TestCompatSearchOneShot(t *testing.T) {
	r, alice, ba, ch := openChannel(t)
	ba.accept(signed(t, alice, 9, nostr.Tags{{"h", ch}}, "deploy went fine"))

	rc := authedRaw(t, r, alice)
	rc.sendJSON([]any{"REQ", "find", map[string]any{"search": "deploy"}})
	if _, ev := rc.event(); !strings.Contains(ev.Content, "deploy") {
		t.Fatalf("search result %q", ev.Content)
	}
	rc.expect("EOSE")
	rc.sendJSON([]any{"REQ", "live", map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 0}})
	rc.expect("EOSE")
	later := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "deploy again")
	ba.accept(later)
	if sub, ev := rc.event(); sub != "live" || ev.ID != later.ID {
		t.Fatalf("got %s %q: the search subscription stayed live", sub, ev.Content)
	}

	rc.sendJSON([]any{"REQ", "mixed", map[string]any{"search": "deploy"}, map[string]any{"kinds": []int{9}}})
	closed := rc.expect("CLOSED")
	if reason := str(t, closed[2]); str(t, closed[1]) != "mixed" || !strings.HasPrefix(reason, "invalid:") || !strings.Contains(reason, "mixed") {
		t.Fatalf("mixed REQ: %s, want CLOSED invalid:", joinRaw(closed))
	}
	body, _ := json.Marshal([]map[string]any{{"search": "deploy"}, {"kinds": []int{9}}})
	if status, out := ba.post("/query", body); status != http.StatusBadRequest || !strings.Contains(string(out), "invalid:") {
		t.Fatalf("/query mixing search: %d %s, want 400 invalid:", status, out)
	}
}

// Item 17: a 9007 with a valueless ["t"] is refused whole.
func TestCompatValuelessLabel(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	id := createChannelID()
	a := ba.submit(signed(t, alice, 9007, nostr.Tags{{"h", id}, {"name", "n"}, {"t"}}, ""))
	if a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
		t.Fatalf("9007 with [\"t\"]: %+v, want invalid:", a)
	}
	if evs := ba.query(map[string]any{"kinds": []int{39000}, "#d": []string{id}}); len(evs) != 0 {
		t.Fatal("the channel was created")
	}
	ch := newChannel(t, ba, "open")
	if a := ba.submit(signed(t, alice, 9002, nostr.Tags{{"h", ch}, {"t"}}, "")); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
		t.Fatalf("9002 with [\"t\"]: %+v, want invalid:", a)
	}
}

// Item 18: localhost, 127.0.0.1 and [::1] name the same local relay in the
// NIP-98 u and the NIP-42 relay tag.
func TestCompatLoopbackNames(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	port := r.HTTPURL[strings.LastIndex(r.HTTPURL, ":"):]
	body, _ := json.Marshal([]map[string]any{{"kinds": []int{1}, "limit": 1}})
	b := newBridge(t, r, alice)
	for _, host := range []string{"localhost", "127.0.0.1", "[::1]", "LocalHost"} {
		if status, out := b.postAs("http://"+host+port, "/query", body); status != http.StatusOK {
			t.Errorf("NIP-98 u naming %s: %d %s", host, status, out)
		}
	}
	if status, _ := b.postAs("http://127.0.0.2"+port, "/query", body); status != http.StatusUnauthorized {
		t.Errorf("NIP-98 u naming another host: %d, want 401", status)
	}
	for _, host := range []string{"localhost", "[::1]"} {
		rc := dialRaw(t, r)
		rc.send(`["REQ","warmup",{"limit":0}]`)
		challenge := str(t, rc.expect("AUTH")[1])
		rc.expect("CLOSED")
		ev := signed(t, alice, 22242, nostr.Tags{{"relay", "ws://" + host + port}, {"challenge", challenge}}, "")
		rc.sendJSON([]any{"AUTH", ev})
		if ok := rc.expect("OK"); string(ok[2]) != "true" {
			t.Errorf("AUTH relay naming %s: %s", host, joinRaw(ok))
		}
	}
}

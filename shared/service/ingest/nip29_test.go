package ingest_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Issue 28: a generic NIP-29 client's 9007 (only h, a non-UUID id) creates
// the group with its sender as owner; metadata and flags come by 9002 and
// are published in 39000 beside Buzz's tags.
func TestNIP29CreateAndFlags(t *testing.T) {
	h := newHarness(t)
	owner, outsider := testkit.NewKey(t), testkit.NewKey(t)
	id := "Xk9_group-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	out := h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", id}))
	if len(out.Committed) != 6 { // the create, its 40099 row, 39000-39003
		t.Fatalf("committed %d events", len(out.Committed))
	}
	if h.scalar(`SELECT count(*) FROM channels WHERE id = $1`, id) != 1 {
		t.Fatal("the id is stored as sent (case kept)")
	}
	meta := h.head(id, 39000)
	if hasTag(meta, "name") || !hasTag(meta, "public") || !hasTag(meta, "open") || !hasTag(meta, "channel_type", "stream") {
		t.Fatalf("39000 of a bare 9007: %v", meta.Tags)
	}
	if !hasTag(h.head(id, 39001), "p", owner.Pub, "owner") {
		t.Fatal("the sender is owner")
	}
	roles := h.head(id, 39003)
	if !hasTag(roles, "role", "owner") || !hasTag(roles, "role", "admin") || !hasTag(roles, "d", id) {
		t.Fatalf("39003: %v", roles.Tags)
	}
	if o := h.submit(owner.Event(t, 9007, "", nostr.Tag{"h", id})); !strings.HasPrefix(o.Message, "duplicate:") {
		t.Fatalf("second 9007: %q", o.Message)
	}
	// Each flag by 9002, as welshman sends it (every flag named at once).
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"name", "Pizza"}, nostr.Tag{"about", "a"},
		nostr.Tag{"picture", "https://x/p.png"}, nostr.Tag{"private"}, nostr.Tag{"restricted"}, nostr.Tag{"hidden"}, nostr.Tag{"closed"},
		nostr.Tag{"supported_kinds", "9", "11", "1111"}))
	meta = h.head(id, 39000)
	for _, tag := range [][]string{{"name", "Pizza"}, {"private"}, {"restricted"}, {"hidden"}, {"closed"}, {"supported_kinds", "9", "11", "1111"}} {
		if !hasTag(meta, tag...) {
			t.Fatalf("39000 lacks %v: %v", tag, meta.Tags)
		}
	}
	if h.head(id, 39003).ID != roles.ID {
		t.Fatal("39003 is published once")
	}
	// A hidden group does not exist for an outsider.
	h.refused(outsider.Event(t, 9, "hi", nostr.Tag{"h", id}), "restricted: channel "+id+" does not exist")
	// supported_kinds: other kinds refused, also for a member.
	h.refused(owner.Event(t, 1, "note", nostr.Tag{"h", id}), "restricted: group "+id+" does not take kind 1")
	h.ok(owner.Event(t, 9, "chat", nostr.Tag{"h", id}))
	// Naming no flag keeps the flags (Buzz's name-only edit); naming some
	// sets exactly those.
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"about", "b"}))
	if !hasTag(h.head(id, 39000), "hidden") {
		t.Fatal("an edit naming no flag changed the flags")
	}
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"restricted"}, nostr.Tag{"supported_kinds"}))
	meta = h.head(id, 39000)
	if hasTag(meta, "private") || hasTag(meta, "hidden") || hasTag(meta, "closed") || !hasTag(meta, "restricted") || !hasTag(meta, "public") {
		t.Fatalf("39000 after naming only restricted: %v", meta.Tags)
	}
	// An empty supported_kinds takes no kind.
	h.refused(owner.Event(t, 9, "chat", nostr.Tag{"h", id}), "restricted: group "+id+" does not take kind 9")
	// Buzz's visibility=private maps to private, restricted, closed and
	// (issue 36: Buzz scopes a private channel's metadata to its members)
	// hidden.
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"visibility", "private"}, nostr.Tag{"supported_kinds", "9"}))
	meta = h.head(id, 39000)
	if !hasTag(meta, "private") || !hasTag(meta, "restricted") || !hasTag(meta, "closed") || !hasTag(meta, "hidden") {
		t.Fatalf("visibility=private: %v", meta.Tags)
	}
}

// Bad input: each a clear invalid: and nothing stored.
func TestNIP29BadInput(t *testing.T) {
	h := newHarness(t)
	owner := testkit.NewKey(t)
	id := h.channel(owner)
	for name, ev := range map[string]*nostr.Event{
		"id with a forbidden character": owner.Event(t, 9007, "", nostr.Tag{"h", "pizza lovers"}),
		"id too long":                   owner.Event(t, 9007, "", nostr.Tag{"h", strings.Repeat("p", 65)}),
		"message to a malformed id":     owner.Event(t, 9, "x", nostr.Tag{"h", "a.b"}),
		"flag with a value":             owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"closed", "true"}),
		"9007 flag with a value":        owner.Event(t, 9007, "", nostr.Tag{"h", testkit.ChannelID()}, nostr.Tag{"private", "1"}),
		"supported_kinds not a number":  owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"supported_kinds", "chat"}),
		"9009 without a code":           owner.Event(t, 9009, "", nostr.Tag{"h", id}),
		"9009 with an empty code":       owner.Event(t, 9009, "", nostr.Tag{"h", id}, nostr.Tag{"code", ""}),
		"self parent":                   owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"parent", id}),
		"9007 self parent":              owner.Event(t, 9007, "", nostr.Tag{"h", "selfish"}, nostr.Tag{"parent", "selfish"}),
		"1111 without root tags":        owner.Event(t, 1111, "c", nostr.Tag{"h", id}, nostr.Tag{"e", strings.Repeat("a", 64)}, nostr.Tag{"k", "11"}),
		"1111 without parent tags":      owner.Event(t, 1111, "c", nostr.Tag{"h", id}, nostr.Tag{"E", strings.Repeat("a", 64)}, nostr.Tag{"K", "11"}),
	} {
		t.Run(name, func(t *testing.T) { h.refused(ev, "invalid:") })
	}
}

// Subgroups: a parent tag per NIP-29; cycles refused, a missing or deleted
// parent published as a root, re-parenting by 9002.
func TestNIP29Subgroups(t *testing.T) {
	h := newHarness(t)
	owner := testkit.NewKey(t)
	tech := "tech-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	nostrG, nip := tech+"-nostr", tech+"-nip29"
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", tech}))
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", nostrG}, nostr.Tag{"parent", tech}))
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", nip}, nostr.Tag{"parent", nostrG}))
	if !hasTag(h.head(nip, 39000), "parent", nostrG) {
		t.Fatal("the subgroup's 39000 names its parent")
	}
	// tech under nip29 would be a cycle.
	h.refused(owner.Event(t, 9002, "", nostr.Tag{"h", tech}, nostr.Tag{"parent", nip}), "invalid: parent "+nip+" would make a cycle")
	// A parent that does not exist: a root.
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", tech + "-orphan"}, nostr.Tag{"parent", "nowhere"}))
	if hasTag(h.head(tech+"-orphan", 39000), "parent") {
		t.Fatal("a missing parent is published as a root")
	}
	// Re-parent, then promote to root.
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", nip}, nostr.Tag{"parent", tech}))
	if !hasTag(h.head(nip, 39000), "parent", tech) {
		t.Fatal("re-parented")
	}
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", nip}, nostr.Tag{"parent", ""}))
	if hasTag(h.head(nip, 39000), "parent") {
		t.Fatal("promoted to root")
	}
	// A deleted parent: its children become roots, their 39000 published
	// again in the deletion's transaction.
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", nip}, nostr.Tag{"parent", nostrG}))
	if !hasTag(h.head(nostrG, 39000), "parent", tech) {
		t.Fatal("nostr is under tech")
	}
	h.ok(owner.Event(t, 9008, "", nostr.Tag{"h", tech}))
	if hasTag(h.head(nostrG, 39000), "parent") {
		t.Fatal("a deleted parent makes a root")
	}
	if !hasTag(h.head(nip, 39000), "parent", nostrG) {
		t.Fatal("a grandchild keeps its own live parent")
	}
}

// Joining, invites and roles (NIP-29).
func TestNIP29JoinInvitesRoles(t *testing.T) {
	h := newHarness(t)
	owner, admin, alice, bob, carol := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	id := "club_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", id}, nostr.Tag{"private"}, nostr.Tag{"closed"}))
	// Roles: NIP-29 form, unknown names stored without privilege.
	h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", id}, nostr.Tag{"p", admin.Pub, "admin"}))
	h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", id}, nostr.Tag{"p", carol.Pub, "gardener"}))
	if !hasTag(h.head(id, 39002), "p", carol.Pub, "", "gardener") || hasTag(h.head(id, 39001), "p", carol.Pub) {
		t.Fatal("an unknown role is stored and gives no privilege (not in 39001)")
	}
	h.refused(carol.Event(t, 9009, "", nostr.Tag{"h", id}, nostr.Tag{"code", "x"}), "restricted: only a channel owner or admin may create invites")
	// A closed group: the request is pending review.
	o := h.submit(alice.Event(t, 9021, "", nostr.Tag{"h", id}))
	if o.Accepted || !strings.Contains(o.Message, "pending review") {
		t.Fatalf("closed join: %+v", o)
	}
	// Invites by admins; the 9009 is not stored, its codes are.
	inv := admin.Event(t, 9009, "", nostr.Tag{"h", id}, nostr.Tag{"code", "s3cret"}, nostr.Tag{"code", "other"})
	if out := h.ok(inv); len(out.Committed) != 0 {
		t.Fatalf("a 9009 is not delivered: %d", len(out.Committed))
	}
	if h.scalar(`SELECT count(*) FROM events WHERE id = $1`, inv.ID) != 0 {
		t.Fatal("the 9009 is not stored as an event")
	}
	h.refused(bob.Event(t, 9021, "", nostr.Tag{"h", id}, nostr.Tag{"code", "wrong"}), "restricted: the invite code is not valid")
	h.ok(alice.Event(t, 9021, "", nostr.Tag{"h", id}, nostr.Tag{"code", "s3cret"}))
	if !hasTag(h.head(id, 39002), "p", alice.Pub) {
		t.Fatal("a valid code admits")
	}
	if o := h.submit(alice.Event(t, 9021, "", nostr.Tag{"h", id})); !strings.HasPrefix(o.Message, "duplicate:") {
		t.Fatalf("a member's 9021: %q", o.Message)
	}
	// Revoked by a 9005 of the 9009.
	h.ok(admin.Event(t, 9005, "", nostr.Tag{"h", id}, nostr.Tag{"e", inv.ID}))
	h.refused(bob.Event(t, 9021, "", nostr.Tag{"h", id}, nostr.Tag{"code", "other"}), "restricted: the invite code is not valid")
	// Expired codes do not admit.
	// (Issue 40, NIP-40: a 9009 already expired is refused at ingest; one
	// taken while its expiration was ahead expires later.)
	at := time.Now().Add(-100 * time.Second)
	h.refused(admin.Event(t, 9009, "", nostr.Tag{"h", id}, nostr.Tag{"code", "old"}, nostr.Tag{"expiration", strconv.FormatInt(time.Now().Unix()-1, 10)}), "invalid:")
	earlier := h.svc.WithClock(func() time.Time { return at })
	old := admin.EventAt(t, at, 9009, "", nostr.Tag{"h", id}, nostr.Tag{"code", "old"}, nostr.Tag{"expiration", strconv.FormatInt(at.Unix()+50, 10)})
	if out, err := earlier.Submit(context.Background(), community, admin.Pub, old); err != nil || !out.Accepted {
		t.Fatalf("a 9009 whose expiration is ahead: %q %v", out.Message, err)
	}
	h.refused(bob.Event(t, 9021, "", nostr.Tag{"h", id}, nostr.Tag{"code", "old"}), "restricted: the invite code is not valid")
	// Pending requests are readable to admins; they admit with 9000.
	h.ok(admin.Event(t, 9000, "", nostr.Tag{"h", id}, nostr.Tag{"p", bob.Pub}))
	// An open group admits at once.
	open := "open_" + id
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", open}))
	h.ok(bob.Event(t, 9021, "", nostr.Tag{"h", open}))
}

// Any kind in a group, NIP-22 comments and threads, personal kinds outside
// groups.
func TestNIP29AnyKind(t *testing.T) {
	h := newHarness(t)
	owner, outsider := testkit.NewKey(t), testkit.NewKey(t)
	id := h.channel(owner)
	h.ok(owner.Event(t, 4242, "whatever", nostr.Tag{"h", id}))
	h.refused(owner.Event(t, 4242, "whatever"), "restricted: unknown event kind")
	cal := owner.Event(t, 31922, "", nostr.Tag{"h", id}, nostr.Tag{"d", "meetup"})
	h.ok(cal)
	if h.scalar(`SELECT count(*) FROM events WHERE id = $1 AND channel_id = $2 AND d_tag = 'meetup'`, cal.ID, id) != 1 {
		t.Fatal("an addressable kind in a group is stored in it")
	}
	thread := owner.Event(t, 11, "thread", nostr.Tag{"h", id}, nostr.Tag{"title", "t"})
	h.ok(thread)
	c := owner.Event(t, 1111, "comment", nostr.Tag{"h", id}, nostr.Tag{"E", thread.ID, "", owner.Pub}, nostr.Tag{"K", "11"},
		nostr.Tag{"P", owner.Pub}, nostr.Tag{"e", thread.ID, "", owner.Pub}, nostr.Tag{"k", "11"}, nostr.Tag{"p", owner.Pub})
	h.ok(c)
	if th := h.thread(c.ID); th.Depth != 0 {
		t.Fatalf("a 1111 is a window row (NIP-CW: no reply marker): depth %d", th.Depth)
	}
	// Restricted group: an outsider's comment is refused.
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"restricted"}))
	h.refused(outsider.Event(t, 1111, "c", nostr.Tag{"h", id}, nostr.Tag{"E", thread.ID}, nostr.Tag{"K", "11"}, nostr.Tag{"e", thread.ID}, nostr.Tag{"k", "11"}),
		"restricted:")
	// Personal kinds: outside any group, an h ignored, the newest kept.
	for _, kind := range []int{10002, 10050, 10000, 10030, 10009} {
		ev := outsider.Event(t, kind, "", nostr.Tag{"h", id})
		h.ok(ev)
		if h.scalar(`SELECT count(*) FROM events WHERE id = $1 AND channel_id IS NULL`, ev.ID) != 1 {
			t.Fatalf("kind %d is kept outside any group", kind)
		}
	}
	set1 := outsider.EventAt(t, time.Now().Add(-time.Second), 30003, "", nostr.Tag{"d", "b"})
	set2 := outsider.Event(t, 30003, "", nostr.Tag{"d", "b"})
	h.ok(set1)
	h.ok(set2)
	if h.scalar(`SELECT count(*) FROM events WHERE kind = 30003 AND pubkey = $1`, outsider.Pub) != 1 {
		t.Fatal("a NIP-51 set keeps its newest version")
	}
}

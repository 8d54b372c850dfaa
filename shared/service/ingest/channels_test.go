package ingest_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

func TestCreateChannelPublishesState(t *testing.T) {
	h := newHarness(t)
	owner := testkit.NewKey(t)
	id := testkit.ChannelID()
	create := owner.EventAt(t, time.Now().Add(-30*time.Second), 9007, "", nostr.Tag{"h", id}, nostr.Tag{"name", "agent-config"},
		nostr.Tag{"about", "config"}, nostr.Tag{"channel_type", "workflow"}, nostr.Tag{"t", "agent-config"}, nostr.Tag{"t", "ops"}, nostr.Tag{"t", "agent-config"})
	out := h.ok(create)
	// Issue 28: the 39003 roles are published with the group; issue 52:
	// Buzz's channel_created timeline row (40099) in the same commit.
	if len(out.Committed) != 6 || out.Committed[0].ID != create.ID {
		t.Fatalf("committed %d events, want the create, its 40099 and 39000/39001/39002/39003", len(out.Committed))
	}
	if row := out.Committed[1]; row.Kind != 40099 || row.Content != `{"type":"channel_created","actor":"`+owner.Pub+`"}` ||
		!reflect.DeepEqual(row.Tags, nostr.Tags{{"h", id}}) {
		t.Fatalf("the creation's system row: kind %d %s %v", row.Kind, row.Content, row.Tags)
	}
	identity := nostr.Tags{{"t", "workflow"}, {"t", "agent-config"}, {"t", "ops"}, {"P", owner.Pub}}
	for _, kind := range []int{39000, 39001, 39002} {
		ev := h.head(id, kind)
		if !reflect.DeepEqual(ev.Tags[0], nostr.Tag{"d", id}) || !reflect.DeepEqual(ev.Tags[1:5], identity) {
			t.Fatalf("kind %d: identity tags %v", kind, ev.Tags)
		}
	}
	meta := h.head(id, 39000)
	if !hasTag(meta, "created_at", strconv.FormatInt(int64(create.CreatedAt), 10)) || !hasTag(meta, "name", "agent-config") || !hasTag(meta, "public") {
		t.Fatalf("39000 tags %v", meta.Tags)
	}
	if hasTag(meta, "hidden") {
		t.Fatal("an open workflow channel is not hidden")
	}
	if !hasTag(h.head(id, 39001), "p", owner.Pub, "owner") || !hasTag(h.head(id, 39002), "p", owner.Pub) {
		t.Fatal("the creator is the owner and a member")
	}
	// An edit keeps the created_at tag, P, and the stored label order.
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"name", "renamed"}))
	meta2 := h.head(id, 39000)
	if !hasTag(meta2, "created_at", strconv.FormatInt(int64(create.CreatedAt), 10)) || !hasTag(meta2, "name", "renamed") ||
		!reflect.DeepEqual(meta2.Tags[1:5], identity) || meta2.CreatedAt <= meta.CreatedAt {
		t.Fatalf("edited 39000: %v at %d (was %d)", meta2.Tags, meta2.CreatedAt, meta.CreatedAt)
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE kind = 39000 AND channel_id = $1`, id); n != 1 {
		t.Fatalf("%d 39000 events stored, want only the current head", n)
	}
	h.noOrphans()
}

func TestStateCreatedAtIsMonotonic(t *testing.T) {
	h := newHarness(t)
	fixed := time.Now()
	h.svc = h.svc.WithClock(func() time.Time { return fixed })
	owner := testkit.NewKey(t)
	id := h.channel(owner)
	prev := h.head(id, 39000).CreatedAt
	for i := 0; i < 3; i++ {
		h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"about", strconv.Itoa(i)}))
		at := h.head(id, 39000).CreatedAt
		if at != prev+1 {
			t.Fatalf("edit %d: created_at %d, want previous+1 = %d", i, at, prev+1)
		}
		prev = at
	}
}

func TestCreateRules(t *testing.T) {
	h := newHarness(t)
	owner := testkit.NewKey(t)
	id := h.channel(owner)
	// Creating an existing id is a duplicate with no change.
	before := h.counts()
	out := h.submit(owner.Event(t, 9007, "", nostr.Tag{"h", id}, nostr.Tag{"name", "again"}))
	if !out.Accepted || out.Message[:10] != "duplicate:" || len(out.Committed) != 0 || h.counts() != before {
		t.Fatalf("re-create: %+v", out)
	}
	h.refused(owner.Event(t, 9007, "", nostr.Tag{"name", "x"}), "invalid: channel create needs an h tag")
	// Issue 28: any NIP-29 id and no required name (was: UUID and name).
	h.refused(owner.Event(t, 9007, "", nostr.Tag{"h", "not a uuid!"}, nostr.Tag{"name", "x"}), "invalid:")
	h.refused(owner.Event(t, 9007, "", nostr.Tag{"h", strings.Repeat("g", 65)}), "invalid:")
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", testkit.ChannelID()}))
	h.refused(owner.Event(t, 9007, "", nostr.Tag{"h", testkit.ChannelID()}, nostr.Tag{"name", "x"}, nostr.Tag{"channel_type", "voice"}), "invalid: channel_type")
	h.refused(owner.Event(t, 9007, "", nostr.Tag{"h", testkit.ChannelID()}, nostr.Tag{"name", "x"}, nostr.Tag{"visibility", "secret"}), "invalid: visibility")
	for _, bad := range [][]nostr.Tag{
		{{"t", "Upper"}},
		{{"t", "stream"}},
		{{"t", "system"}},
		{{"t", ""}, {"t", "a"}},
		{{"t", "1"}, {"t", "2"}, {"t", "3"}, {"t", "4"}, {"t", "5"}, {"t", "6"}, {"t", "7"}, {"t", "8"}, {"t", "9"}},
	} {
		tags := append([]nostr.Tag{{"h", testkit.ChannelID()}, {"name", "x"}}, bad...)
		h.refused(owner.Event(t, 9007, "", tags...), "invalid:")
	}
}

func TestLabelsOnEdit(t *testing.T) {
	h := newHarness(t)
	owner, admin, member := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	id := h.channel(owner, nostr.Tag{"t", "a"}, nostr.Tag{"t", "b"})
	h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", id}, nostr.Tag{"p", admin.Pub, "admin"}))
	h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", id}, nostr.Tag{"p", member.Pub}))
	labels := func() []string {
		var l []string
		for _, tg := range h.head(id, 39000).Tags[2:] {
			if tg[0] == "t" {
				l = append(l, tg[1])
			}
		}
		return l
	}
	if got := labels(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("labels %v", got)
	}
	h.ok(admin.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"about", "no t tag keeps labels"}))
	if got := labels(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("no t tag: labels %v", got)
	}
	h.ok(admin.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"t", "z"}, nostr.Tag{"t", "y"}, nostr.Tag{"t", "z"}))
	if got := labels(); !reflect.DeepEqual(got, []string{"z", "y"}) {
		t.Fatalf("replace: labels %v", got)
	}
	h.refused(member.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"t", "mine"}), "restricted: only a channel owner or admin")
	h.refused(admin.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"t", "dm"}), "invalid: label")
	h.refused(admin.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"t", ""}, nostr.Tag{"t", "x"}), "invalid:")
	h.refused(admin.Event(t, 9002, "", nostr.Tag{"h", testkit.ChannelID()}, nostr.Tag{"t", "x"}), "restricted: channel")
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"t", ""}, nostr.Tag{"t", ""}))
	if got := labels(); len(got) != 0 {
		t.Fatalf("clear: labels %v", got)
	}
}

func TestSystemChannels(t *testing.T) {
	h := newHarness(t)
	owner, user := testkit.NewKey(t), testkit.NewKey(t)
	private := h.channel(owner, nostr.Tag{"channel_type", "system"})
	if meta := h.head(private, 39000); !hasTag(meta, "hidden") || !hasTag(meta, "private") || meta.Tags[1][1] != "system" {
		t.Fatalf("private system channel: %v", meta.Tags)
	}
	open := h.channel(owner, nostr.Tag{"channel_type", "system"}, nostr.Tag{"visibility", "open"})
	if meta := h.head(open, 39000); hasTag(meta, "hidden") {
		t.Fatalf("open system channel is hidden: %v", meta.Tags)
	}
	out := h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", user.Pub}))
	out2 := h.ok(user.Event(t, 9021, "", nostr.Tag{"h", open}))
	out3 := h.ok(owner.Event(t, 9001, "", nostr.Tag{"h", private}, nostr.Tag{"p", user.Pub}))
	for _, o := range append(append(out.Committed, out2.Committed...), out3.Committed...) {
		if o.Kind == 44100 || o.Kind == 44101 {
			t.Fatalf("membership notification %d for a system channel", o.Kind)
		}
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE kind IN (44100, 44101)`); n != 0 {
		t.Fatalf("%d membership notifications stored for system channels", n)
	}
}

func TestMembership(t *testing.T) {
	h := newHarness(t)
	owner, admin, alice, bob := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	open := h.channel(owner)
	private := h.channel(owner, nostr.Tag{"visibility", "private"})

	notified := func(out []*nostr.Event, kind int, who, ch string) {
		t.Helper()
		for _, e := range out {
			if e.Kind == kind && hasTag(e, "p", who) && hasTag(e, "h", ch) && e.PubKey == h.relay.PublicKey() {
				return
			}
		}
		t.Fatalf("no %d for %s", kind, who[:8])
	}
	out := h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", admin.Pub, "admin"}))
	notified(out.Committed, 44100, admin.Pub, private)
	if !hasTag(h.head(private, 39001), "p", admin.Pub, "admin") || !hasTag(h.head(private, 39002), "p", admin.Pub) {
		t.Fatal("39001/39002 do not list the new admin")
	}
	h.refused(admin.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", alice.Pub, "owner"}), "restricted: a channel admin cannot grant the owner role")
	// Issue 36: Buzz's private channel is hidden, so it does not exist for
	// a non-member (issue 28 had it private without hidden, which told a
	// non-member what it may not do). A NIP-29 group that is private and
	// not hidden still does.
	h.refused(alice.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", bob.Pub}), "restricted: channel "+private+" does not exist or you are not a member")
	nip29Private := h.channel(owner, nostr.Tag{"private"}, nostr.Tag{"restricted"}, nostr.Tag{"closed"})
	h.refused(alice.Event(t, 9000, "", nostr.Tag{"h", nip29Private}, nostr.Tag{"p", bob.Pub}), "restricted: only a channel owner or admin")
	h.refused(admin.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", "nothex"}), "invalid: p tag")
	h.refused(admin.Event(t, 9000, "", nostr.Tag{"h", private}), "invalid: put-user needs a p tag")
	h.refused(admin.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", alice.Pub, strings.Repeat("k", 40)}), "invalid: role")
	h.refused(admin.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", owner.Pub, "member"}), "restricted: only an owner may change an owner's role")
	h.refused(owner.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", owner.Pub, "member"}), "restricted: the last owner")
	h.ok(admin.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", alice.Pub}))

	// Joining: open channels only.
	out = h.ok(bob.Event(t, 9021, "", nostr.Tag{"h", open}))
	notified(out.Committed, 44100, bob.Pub, open)
	// Issue 28: a private group that is closed, not hidden (NIP-29): a
	// join request is kept for its admins and refused as pending review.
	// (Issue 36: a Buzz private channel is hidden too, so its join is
	// refused as the join of a channel that does not exist.)
	pending := bob.Event(t, 9021, "", nostr.Tag{"h", nip29Private})
	if o := h.submit(pending); o.Accepted || !strings.HasPrefix(o.Message, "restricted: group "+nip29Private+" is closed: your join request is pending review") || len(o.Committed) != 0 {
		t.Fatalf("join of a closed group: %+v", o)
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE id = $1 AND channel_id = $2`, pending.ID, nip29Private); n != 1 {
		t.Fatal("a pending join request is kept in the group for its admins")
	}
	if n := h.scalar(`SELECT count(*) FROM channel_members WHERE channel_id = $1 AND pubkey = $2`, nip29Private, bob.Pub); n != 0 {
		t.Fatal("a pending join request admits nobody")
	}
	h.refused(bob.Event(t, 9021, "", nostr.Tag{"h", private}), "restricted: channel "+private+" does not exist or you are not a member")
	unknown := testkit.ChannelID()
	h.refused(bob.Event(t, 9021, "", nostr.Tag{"h", unknown}), "restricted: channel "+unknown+" does not exist or you are not a member")
	if o := h.submit(bob.Event(t, 9021, "", nostr.Tag{"h", open})); o.Message[:10] != "duplicate:" {
		t.Fatalf("second join: %q", o.Message)
	}

	// Removing and leaving.
	h.refused(admin.Event(t, 9001, "", nostr.Tag{"h", private}, nostr.Tag{"p", owner.Pub}), "restricted: only an owner may remove an owner")
	h.refused(alice.Event(t, 9001, "", nostr.Tag{"h", private}, nostr.Tag{"p", admin.Pub}), "restricted:")
	h.refused(admin.Event(t, 9001, "", nostr.Tag{"h", private}, nostr.Tag{"p", bob.Pub}), "invalid:")
	out = h.ok(admin.Event(t, 9001, "", nostr.Tag{"h", private}, nostr.Tag{"p", alice.Pub}))
	notified(out.Committed, 44101, alice.Pub, private)
	if hasTag(h.head(private, 39002), "p", alice.Pub) {
		t.Fatal("removed member still in 39002")
	}
	h.refused(owner.Event(t, 9022, "", nostr.Tag{"h", private}), "restricted: the last owner")
	// A private group (Buzz's private is also hidden, issue 36) a key that
	// is no longer its member leaves answers as a missing one, hidden or not.
	h.refused(alice.Event(t, 9022, "", nostr.Tag{"h", private}), "restricted: channel "+private+" does not exist or you are not a member")
	h.refused(alice.Event(t, 9022, "", nostr.Tag{"h", nip29Private}), "restricted: channel "+nip29Private+" does not exist or you are not a member")
	out = h.ok(bob.Event(t, 9022, "", nostr.Tag{"h", open}))
	notified(out.Committed, 44101, bob.Pub, open)
	// Promote admin to owner, then the first owner may leave.
	h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", admin.Pub, "owner"}))
	h.ok(owner.Event(t, 9022, "", nostr.Tag{"h", private}))

	// Deleting a channel: owner only, then it takes no more events.
	h.refused(bob.Event(t, 9008, "", nostr.Tag{"h", open}), "restricted: only a channel owner")
	h.ok(owner.Event(t, 9008, "", nostr.Tag{"h", open}))
	h.refused(owner.Event(t, 9, "hi", nostr.Tag{"h", open}), "restricted: channel")
}

func TestWriteAccess(t *testing.T) {
	h := newHarness(t)
	owner, member, stranger := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	open := h.channel(owner)
	private := h.channel(owner, nostr.Tag{"visibility", "private"})
	h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", private}, nostr.Tag{"p", member.Pub}))
	h.ok(stranger.Event(t, 9, "any key may write to an open channel", nostr.Tag{"h", open}))
	h.ok(member.Event(t, 9, "members write to private channels", nostr.Tag{"h", private}))
	h.refused(stranger.Event(t, 9, "no", nostr.Tag{"h", private}), "restricted: channel "+private+" does not exist or you are not a member")
	h.refused(stranger.Event(t, 9, "no channel"), "invalid: kind 9 needs an h tag")
	h.refused(stranger.Event(t, 9, "unknown", nostr.Tag{"h", testkit.ChannelID()}), "restricted: channel")
	h.ok(stranger.Event(t, 1, "a plain note needs no channel"))
	// Duplicates: accepted, duplicate:, no side effect.
	msg := member.Event(t, 9, "once", nostr.Tag{"h", private})
	h.ok(msg)
	before := h.counts()
	out := h.submit(msg)
	if !out.Accepted || out.Message[:10] != "duplicate:" || len(out.Committed) != 0 || h.counts() != before {
		t.Fatalf("duplicate: %+v", out)
	}
}

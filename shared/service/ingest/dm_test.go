package ingest_test

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Buzz's DM channels: open (41010), add member (41011), hide (41012), with
// the relay-signed state, 44100s and 30622 they produce in one transaction.
func TestDMChannels(t *testing.T) {
	h := newHarness(t)
	alice, bob, carol := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	relay := h.relay.PublicKey()
	dm := nip29.DMChannelID(sorted(alice.Pub, bob.Pub))

	out := h.ok(alice.Event(t, 41010, "", nostr.Tag{"p", bob.Pub}))
	for _, who := range []string{alice.Pub, bob.Pub} {
		if !has(out.Committed, 44100, relay, "p", who, "h", dm) {
			t.Fatalf("no 44100 for %s", who[:8])
		}
	}
	meta := h.head(dm, 39000)
	if !hasTag(meta, "hidden") || !hasTag(meta, "private") || !hasTag(meta, "t", "dm") || !hasTag(meta, "p", alice.Pub) || !hasTag(meta, "p", bob.Pub) {
		t.Fatalf("39000 of a DM: %v", meta.Tags)
	}
	if m := h.head(dm, 39002); !hasTag(m, "p", alice.Pub) || !hasTag(m, "p", bob.Pub) || hasTag(m, "p", carol.Pub) {
		t.Fatalf("39002 of a DM: %v", m.Tags)
	}
	// The same set in any order is the same DM: no second channel, no new 44100.
	out = h.ok(bob.Event(t, 41010, "", nostr.Tag{"p", alice.Pub}, nostr.Tag{"p", bob.Pub}))
	if n := h.scalar(`SELECT count(*) FROM channels WHERE channel_type = 'dm'`); n != 1 || has(out.Committed, 44100, relay) {
		t.Fatalf("reopen: %d DM channels, committed %v", n, out.Committed)
	}

	// Refusals, each without a trace.
	h.refused(alice.Event(t, 41010, ""), "invalid: kind 41010 needs at least one p tag")
	h.refused(alice.Event(t, 41010, "", nostr.Tag{"p", alice.Pub}), "invalid: a DM has 2 to 9 participants")
	h.refused(alice.Event(t, 41010, "", nostr.Tag{"p", "nothex"}), "invalid: a p tag needs")
	many := []nostr.Tag{}
	for i := 0; i < 9; i++ {
		many = append(many, nostr.Tag{"p", testkit.NewKey(t).Pub})
	}
	h.refused(alice.Event(t, 41010, "", many...), "invalid: a DM has 2 to 9 participants")
	// A key outside the DM is told it does not exist.
	h.refused(carol.Event(t, 41011, "", nostr.Tag{"h", dm}, nostr.Tag{"p", carol.Pub}), "restricted: channel "+dm+" does not exist")
	h.refused(carol.Event(t, 41012, "", nostr.Tag{"h", dm}), "restricted: channel "+dm+" does not exist")
	h.refused(carol.Event(t, 9, "hi", nostr.Tag{"h", dm}), "restricted:")
	h.refused(carol.Event(t, 9021, "", nostr.Tag{"h", dm}), "restricted: channel "+dm+" does not exist")
	h.refused(alice.Event(t, 41011, "", nostr.Tag{"h", dm}, nostr.Tag{"p", bob.Pub}), "invalid: kind 41011 needs a p tag naming a key not already in the DM")
	stream := h.channel(alice)
	h.refused(alice.Event(t, 41012, "", nostr.Tag{"h", stream}), "invalid: channel "+stream+" is not a DM")

	// Participants write; add member opens the DM of the larger set.
	h.ok(bob.Event(t, 9, "hello", nostr.Tag{"h", dm}))
	group := nip29.DMChannelID(sorted(alice.Pub, bob.Pub, carol.Pub))
	out = h.ok(alice.Event(t, 41011, "", nostr.Tag{"h", dm}, nostr.Tag{"p", carol.Pub}))
	if !has(out.Committed, 44100, relay, "p", carol.Pub, "h", group) {
		t.Fatal("no 44100 for the added key in the larger DM")
	}
	if n := h.scalar(`SELECT count(*) FROM channel_members WHERE channel_id = $1 AND removed_at IS NULL`, dm); n != 2 {
		t.Fatalf("the first DM's participants changed: %d", n)
	}

	// Hide: the sender's 30622 names it; a repeat is a duplicate; the
	// event itself is not stored.
	hide := bob.Event(t, 41012, "", nostr.Tag{"h", dm})
	out = h.ok(hide)
	if !has(out.Committed, 30622, relay, "d", bob.Pub, "p", bob.Pub, "h", dm) {
		t.Fatalf("no 30622 for bob naming the DM: %v", out.Committed)
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE id = $1`, hide.ID); n != 0 {
		t.Fatal("the 41012 was stored")
	}
	if o := h.submit(bob.Event(t, 41012, "", nostr.Tag{"h", dm})); o.Message != "duplicate: DM "+dm+" is already hidden" || len(o.Committed) != 0 {
		t.Fatalf("hiding twice: %q %v", o.Message, o.Committed)
	}
	h.ok(bob.Event(t, 41012, "", nostr.Tag{"h", group}))
	// Opening it again shows it: one 30622 left, naming only the other DM.
	out = h.ok(bob.Event(t, 41010, "", nostr.Tag{"p", alice.Pub}))
	if !has(out.Committed, 30622, relay, "d", bob.Pub, "h", group) || has(out.Committed, 30622, relay, "h", dm) {
		t.Fatalf("30622 after reopening: %v", out.Committed)
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE kind = 30622 AND deleted_at IS NULL`); n != 1 {
		t.Fatalf("%d 30622 stored, want 1 (replaced)", n)
	}
}

func sorted(keys ...string) []string {
	set := map[string]bool{}
	for _, k := range keys {
		set[k] = true
	}
	out, _ := nip29.DMSet(set)
	return out
}

// has reports whether evs holds a kind event by author carrying every
// name/value pair of tags.
func has(evs []*nostr.Event, kind int, author string, tags ...string) bool {
	for _, e := range evs {
		if e.Kind != kind || e.PubKey != author {
			continue
		}
		ok := true
		for i := 0; i+1 < len(tags); i += 2 {
			if !hasTag(e, tags[i], tags[i+1]) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

package ingest_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// pins returns the group's stored pin lists (39005, d = the group), with
// the channel each is filed in.
func (h *harness) pins(group string) []*nostr.Event {
	h.t.Helper()
	rows, err := h.db.Query(context.Background(), `SELECT raw, coalesce(channel_id, '') FROM events
WHERE kind = 39005 AND d_tag = $1 AND deleted_at IS NULL`, group)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []*nostr.Event
	for rows.Next() {
		var raw, ch string
		if err := rows.Scan(&raw, &ch); err != nil {
			h.t.Fatal(err)
		}
		var ev nostr.Event
		if err := ev.UnmarshalJSON([]byte(raw)); err != nil {
			h.t.Fatal(err)
		}
		if ok, _ := ev.CheckSignature(); !ok || ev.PubKey != h.relay.PublicKey() || ch != group {
			h.t.Fatalf("39005 of %s: signed by %s, filed in %q", group, ev.PubKey, ch)
		}
		out = append(out, &ev)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// TestNIP29PinsReplaceTheGroupsList: an owner's or admin's 9010 is stored
// in the group and replaces the group's one relay-signed 39005 (d = the
// group id, the 9010's e/a tags in order, no h), in the same submission; a
// member's or outsider's 9010 is refused restricted:, a malformed one
// invalid:, each leaving no trace.
func TestNIP29PinsReplaceTheGroupsList(t *testing.T) {
	h, owner, id := newChannelHarness(t)
	admin, member, outsider := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", id}, nostr.Tag{"p", admin.Pub, "admin"}))
	h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", id}, nostr.Tag{"p", member.Pub}))
	m1 := owner.Event(t, 9, "one", nostr.Tag{"h", id})
	m2 := owner.Event(t, 9, "two", nostr.Tag{"h", id})
	h.ok(m1)
	h.ok(m2)
	if len(h.pins(id)) != 0 {
		t.Fatal("a group has no pin list before its first 9010")
	}

	out := h.ok(owner.Event(t, 9010, "", nostr.Tag{"h", id}, nostr.Tag{"e", m2.ID}, nostr.Tag{"e", m1.ID}))
	if len(out.Committed) != 2 || out.Committed[0].Kind != 9010 || out.Committed[1].Kind != 39005 {
		t.Fatalf("committed %v", out.Committed)
	}
	got := h.pins(id)
	if len(got) != 1 || !reflect.DeepEqual(got[0].Tags, nostr.Tags{{"d", id}, {"e", m2.ID}, {"e", m1.ID}}) {
		t.Fatalf("pin list after the first 9010: %v", got)
	}
	first := got[0]
	if h.scalar(`SELECT count(*) FROM events WHERE kind = 9010 AND channel_id = $1`, id) != 1 {
		t.Fatal("the 9010 is stored in the group")
	}

	// An admin replaces it; the new one is strictly newer.
	h.ok(admin.Event(t, 9010, "", nostr.Tag{"h", id}, nostr.Tag{"e", m1.ID}))
	got = h.pins(id)
	if len(got) != 1 || !reflect.DeepEqual(got[0].Tags, nostr.Tags{{"d", id}, {"e", m1.ID}}) || got[0].CreatedAt <= first.CreatedAt {
		t.Fatalf("pin list after the admin's 9010: %v", got)
	}
	// An empty 9010 unpins everything.
	h.ok(owner.Event(t, 9010, "", nostr.Tag{"h", id}))
	if got = h.pins(id); len(got) != 1 || !reflect.DeepEqual(got[0].Tags, nostr.Tags{{"d", id}}) {
		t.Fatalf("pin list after an empty 9010: %v", got)
	}

	// Attacks: no role to pin, no group, a malformed or oversized list.
	h.refused(member.Event(t, 9010, "", nostr.Tag{"h", id}, nostr.Tag{"e", m2.ID}), "restricted: only a channel owner or admin may pin events")
	h.refused(outsider.Event(t, 9010, "", nostr.Tag{"h", id}, nostr.Tag{"e", m2.ID}), "restricted: only a channel owner or admin may pin events")
	h.refused(owner.Event(t, 9010, "", nostr.Tag{"e", m2.ID}), "invalid: kind 9010 needs an h tag")
	h.refused(owner.Event(t, 9010, "", nostr.Tag{"h", id}, nostr.Tag{"e", "not-hex"}), "invalid: pinned e")
	many := []nostr.Tag{{"h", id}}
	for i := 0; i < 51; i++ {
		many = append(many, nostr.Tag{"e", testkit.NewKey(t).Pub})
	}
	h.refused(owner.Event(t, 9010, "", many...), "invalid: at most 50 pins")
	h.refused(owner.Event(t, 9010, "", nostr.Tag{"h", "no-such-group"}, nostr.Tag{"e", m2.ID}), "restricted:")
	// A private group's admin pins too (its read rule is checked on reads).
	private := h.channel(owner, nostr.Tag{"visibility", "private"})
	h.ok(owner.Event(t, 9010, "", nostr.Tag{"h", private}, nostr.Tag{"e", m1.ID}))
	if len(h.pins(private)) != 1 || strings.Contains(h.pins(private)[0].String(), `"h"`) {
		t.Fatal("a private group's pin list, without an h tag")
	}
}

package ingest_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// systemRows are the 40099s an outcome committed, their content decoded.
func systemRows(t *testing.T, h *harness, out ingest.Outcome, channel string) []map[string]string {
	t.Helper()
	var rows []map[string]string
	for _, ev := range out.Committed {
		if ev.Kind != 40099 {
			continue
		}
		if ev.PubKey != h.relay.PublicKey() {
			t.Fatalf("a 40099 signed by %s, not the relay", ev.PubKey)
		}
		if !reflect.DeepEqual(ev.Tags, nostr.Tags{{"h", channel}}) {
			t.Fatalf("40099 tags %v, want only the channel's h", ev.Tags)
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(ev.Content), &m); err != nil {
			t.Fatalf("40099 content %q: %v", ev.Content, err)
		}
		rows = append(rows, m)
	}
	return rows
}

// Issue 52: the relay signs Buzz's 40099 timeline rows where Buzz's relay
// does, with its content shapes (crates/buzz-relay/src/handlers/
// side_effects.rs), in the transaction of the change.
func TestSystemRows(t *testing.T) {
	h := newHarness(t)
	owner, admin, alice, bob := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ch := testkit.ChannelID()
	create := h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", ch}, nostr.Tag{"name", "general"}))
	h.ok(owner.Event(t, 9, "hello", nostr.Tag{"h", ch}))
	cases := []struct {
		name string
		out  func() ingest.Outcome
		want []map[string]string
	}{
		{"9007 creates", func() ingest.Outcome { return create },
			[]map[string]string{{"type": "channel_created", "actor": owner.Pub}}},
		{"9000 adds a member", func() ingest.Outcome {
			return h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", ch}, nostr.Tag{"p", admin.Pub, "admin"}))
		}, []map[string]string{{"type": "member_joined", "actor": owner.Pub, "target": admin.Pub}}},
		{"9000 changing a member's role adds nobody", func() ingest.Outcome {
			return h.ok(owner.Event(t, 9000, "", nostr.Tag{"h", ch}, nostr.Tag{"p", admin.Pub, "member"}))
		}, nil},
		{"9021 joins an open channel", func() ingest.Outcome {
			return h.ok(alice.Event(t, 9021, "", nostr.Tag{"h", ch}))
		}, []map[string]string{{"type": "member_joined", "actor": alice.Pub, "target": alice.Pub}}},
		{"9022 leaves", func() ingest.Outcome {
			return h.ok(alice.Event(t, 9022, "", nostr.Tag{"h", ch}))
		}, []map[string]string{{"type": "member_left", "actor": alice.Pub}}},
		{"9001 removes another", func() ingest.Outcome {
			h.ok(bob.Event(t, 9021, "", nostr.Tag{"h", ch}))
			return h.ok(owner.Event(t, 9001, "", nostr.Tag{"h", ch}, nostr.Tag{"p", bob.Pub}))
		}, []map[string]string{{"type": "member_removed", "actor": owner.Pub, "target": bob.Pub}}},
		{"9005 deletes with a moderator's public reason", func() ingest.Outcome {
			h.ok(alice.Event(t, 9021, "again", nostr.Tag{"h", ch}))
			post := alice.Event(t, 9, "spam", nostr.Tag{"h", ch})
			h.ok(post)
			out := h.ok(owner.Event(t, 9005, "", nostr.Tag{"h", ch}, nostr.Tag{"e", post.ID},
				nostr.Tag{"public_reason", "off topic"}, nostr.Tag{"reason_code", "spam"}))
			// The same target deleted again gets no second row.
			again := h.submit(owner.Event(t, 9005, "", nostr.Tag{"h", ch}, nostr.Tag{"e", post.ID}))
			if len(systemRows(t, h, again, ch)) != 0 {
				t.Fatal("a target deleted already got a second message_deleted row")
			}
			return out
		}, nil}, // checked below: its target id is only known inside
		{"9002 visibility private", func() ingest.Outcome {
			return h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"visibility", "private"}))
		}, []map[string]string{{"type": "visibility_changed", "actor": owner.Pub, "visibility": "private"}}},
		{"9002 rename: Buzz writes no row", func() ingest.Outcome {
			return h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"name", "renamed"}))
		}, nil},
		{"9002 archives", func() ingest.Outcome {
			return h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "true"}))
		}, []map[string]string{{"type": "channel_archived", "actor": owner.Pub}}},
		{"9002 unarchives", func() ingest.Outcome {
			return h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "false"}))
		}, []map[string]string{{"type": "channel_unarchived", "actor": owner.Pub}}},
		{"9008 deletes the channel", func() ingest.Outcome {
			return h.ok(owner.Event(t, 9008, "", nostr.Tag{"h", ch}))
		}, []map[string]string{{"type": "channel_deleted", "actor": owner.Pub}}},
	}
	for _, c := range cases {
		out := c.out()
		got := systemRows(t, h, out, ch)
		if c.name == "9005 deletes with a moderator's public reason" {
			if len(got) != 1 || got[0]["type"] != "message_deleted" || got[0]["actor"] != owner.Pub ||
				got[0]["public_reason"] != "off topic" || got[0]["reason_code"] != "spam" || len(got[0]["target_event_id"]) != 64 {
				t.Fatalf("%s: rows %v", c.name, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: rows %v, want %v", c.name, got, c.want)
		}
		// The row commits in the change's transaction (events.xact).
		if len(got) > 0 {
			if n := h.scalar(`SELECT count(DISTINCT xact) FROM events WHERE id = ANY($1)`, []string{out.Committed[0].ID, rowID(out)}); n != 1 {
				t.Errorf("%s: the row and the change committed in %d transactions", c.name, n)
			}
		}
	}
	h.noOrphans()
}

func rowID(out ingest.Outcome) string {
	for _, ev := range out.Committed {
		if ev.Kind == 40099 {
			return ev.ID
		}
	}
	return ""
}

// A change refused is no row: the 40099 leaves with the change (h.refused
// checks every table).
func TestSystemRowsLeaveWithARefusedChange(t *testing.T) {
	h, owner, ch := newChannelHarness(t)
	member, stranger := testkit.NewKey(t), testkit.NewKey(t)
	h.ok(member.Event(t, 9021, "", nostr.Tag{"h", ch}))
	before := h.scalar(`SELECT count(*) FROM events WHERE kind = 40099`)
	h.refused(member.Event(t, 9000, "", nostr.Tag{"h", ch}, nostr.Tag{"p", stranger.Pub}), "restricted:")
	h.refused(member.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "true"}), "restricted:")
	h.refused(owner.Event(t, 9022, "", nostr.Tag{"h", ch}), "restricted:") // the last owner
	h.refused(stranger.Event(t, 9022, "", nostr.Tag{"h", ch}), "invalid:")
	if after := h.scalar(`SELECT count(*) FROM events WHERE kind = 40099`); after != before {
		t.Fatalf("refused changes left %d system rows", after-before)
	}
}

// Buzz's archive (9002 ["archived","true"|"false"]): an archived channel
// refuses every write, the unarchiving 9002 excepted; its 39000 says so;
// a key that may not know the channel learns nothing of it.
func TestArchive(t *testing.T) {
	h, owner, ch := newChannelHarness(t)
	member := testkit.NewKey(t)
	h.ok(member.Event(t, 9021, "", nostr.Tag{"h", ch}))
	post := member.Event(t, 9, "before", nostr.Tag{"h", ch})
	h.ok(post)
	h.refused(owner.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "maybe"}), "invalid:")
	h.refused(member.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "true"}), "restricted:")
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "true"}))
	if !hasTag(h.head(ch, 39000), "archived", "true") {
		t.Fatal("an archived channel's 39000 carries [archived, true]")
	}
	if h.scalar(`SELECT count(*) FROM channels WHERE id = $1 AND archived_at IS NOT NULL`, ch) != 1 {
		t.Fatal("the archive is stored")
	}
	for _, c := range []struct {
		name string
		ev   *nostr.Event
	}{
		{"message", member.Event(t, 9, "after", nostr.Tag{"h", ch})},
		{"stream message", member.Event(t, 40002, "after", nostr.Tag{"h", ch})},
		{"reaction", member.Event(t, 7, "+", nostr.Tag{"h", ch}, nostr.Tag{"e", post.ID}, nostr.Tag{"p", member.Pub})},
		{"edit", member.Event(t, 40003, "edited", nostr.Tag{"h", ch}, nostr.Tag{"e", post.ID})},
		{"deletion naming the channel", member.Event(t, 5, "", nostr.Tag{"e", post.ID}, nostr.Tag{"h", ch})},
		{"put user", owner.Event(t, 9000, "", nostr.Tag{"h", ch}, nostr.Tag{"p", testkit.NewKey(t).Pub})},
		{"rename", owner.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"name", "x"})},
		{"archive again", owner.Event(t, 9002, "again", nostr.Tag{"h", ch}, nostr.Tag{"archived", "true"})},
		{"leave", member.Event(t, 9022, "", nostr.Tag{"h", ch})},
		{"join", testkit.NewKey(t).Event(t, 9021, "", nostr.Tag{"h", ch})},
		{"moderation delete", owner.Event(t, 9005, "", nostr.Tag{"h", ch}, nostr.Tag{"e", post.ID})},
		{"delete channel", owner.Event(t, 9008, "", nostr.Tag{"h", ch})},
	} {
		out := h.submit(c.ev)
		if out.Accepted || !strings.HasPrefix(out.Message, "invalid: channel "+ch+" is archived") {
			t.Errorf("%s in an archived channel: accepted=%v %q", c.name, out.Accepted, out.Message)
		}
	}
	// The unarchive (with a rename in the same 9002) is the one write taken.
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "false"}, nostr.Tag{"name", "back"}))
	if hasTag(h.head(ch, 39000), "archived") || !hasTag(h.head(ch, 39000), "name", "back") {
		t.Fatalf("unarchived 39000: %v", h.head(ch, 39000).Tags)
	}
	h.ok(member.Event(t, 9, "after", nostr.Tag{"h", ch}))
}

// A private archived channel answers a non-member as a channel that does
// not exist, not as an archived one.
func TestArchivedPrivateChannelLeaksNothing(t *testing.T) {
	h := newHarness(t)
	owner, stranger := testkit.NewKey(t), testkit.NewKey(t)
	ch := h.channel(owner, nostr.Tag{"visibility", "private"})
	h.ok(owner.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "true"}))
	for _, ev := range []*nostr.Event{
		stranger.Event(t, 9, "x", nostr.Tag{"h", ch}),
		stranger.Event(t, 9021, "", nostr.Tag{"h", ch}),
		stranger.Event(t, 9002, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "false"}),
	} {
		out := h.submit(ev)
		if out.Accepted || strings.Contains(out.Message, "archived") {
			t.Errorf("kind %d from a stranger: %q", ev.Kind, out.Message)
		}
	}
}

package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// sameAnswer fails unless two refusals are the same text once each names
// its own id the same way: the answer tells nothing about which one exists.
func sameAnswer(t *testing.T, what, a, idA, b, idB string) {
	t.Helper()
	if x, y := strings.ReplaceAll(a, idA, "<id>"), strings.ReplaceAll(b, idB, "<id>"); x != y || x == "" {
		t.Fatalf("%s: %q and %q differ", what, a, b)
	}
}

// refusedText submits ev, requires a refusal that leaves every table as it
// was, and returns its text.
func (h *harness) refusedText(ev *nostr.Event) string {
	h.t.Helper()
	before := h.counts()
	out := h.submit(ev)
	if out.Accepted {
		h.t.Fatalf("kind %d: want a refusal, got accepted (%q)", ev.Kind, out.Message)
	}
	if after := h.counts(); after != before {
		h.t.Fatalf("kind %d: the refusal %q left a trace: before %v after %v", ev.Kind, out.Message, before, after)
	}
	return out.Message
}

// Issue 36: a DM's channel id is a public function of its participants, so
// no 9007 may take it (Carol's channel at Alice and Bob's DM id, which
// Alice's 41010 then joined), and nothing a third key sends at a DM id
// tells whether the DM exists.
func TestDMIDCannotBeSquatted(t *testing.T) {
	h := newHarness(t)
	alice, bob, carol, dave := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	dm := nip29.DMChannelID(sorted(alice.Pub, bob.Pub))
	none := nip29.DMChannelID(sorted(carol.Pub, dave.Pub)) // a DM id with no DM
	squat := func(id string) *nostr.Event {
		return carol.Event(t, 9007, "", nostr.Tag{"h", id}, nostr.Tag{"name", "DM"},
			nostr.Tag{"channel_type", "dm"}, nostr.Tag{"visibility", "open"})
	}
	plain := func(id string) *nostr.Event { return carol.Event(t, 9007, "", nostr.Tag{"h", id}) }

	before := h.refusedText(squat(dm))
	if !strings.HasPrefix(before, "invalid: group id "+dm+" is reserved for DMs") {
		t.Fatalf("squatting a DM id: %q", before)
	}
	sameAnswer(t, "9007 at an upper-case DM id", before, dm, h.refusedText(squat(strings.ToUpper(dm))), dm)
	sameAnswer(t, "9007 without channel_type at a DM id", before, dm, h.refusedText(plain(dm)), dm)
	if m := h.refusedText(squat(testkit.ChannelID())); !strings.HasPrefix(m, "invalid: a DM is opened with kind 41010") {
		t.Fatalf("9007 of channel_type dm: %q", m)
	}

	// The DM opened by its flow is Alice and Bob's alone.
	h.ok(alice.Event(t, 41010, "", nostr.Tag{"p", bob.Pub}))
	h.ok(alice.Event(t, 9, "hi bob", nostr.Tag{"h", dm}))
	if n := h.scalar(`SELECT count(*) FROM channel_members WHERE channel_id = $1 AND pubkey = $2`, dm, carol.Pub); n != 0 {
		t.Fatal("carol is in alice and bob's DM")
	}

	// Carol's answers at the DM's id are those at a DM id with no DM (no
	// duplicate: oracle), and at any id that does not exist.
	missing := testkit.ChannelID()
	sameAnswer(t, "9007 once the DM exists", h.refusedText(squat(dm)), dm, h.refusedText(squat(none)), none)
	for name, ev := range map[string]func(id string) *nostr.Event{
		"9000 add": func(id string) *nostr.Event {
			return carol.Event(t, 9000, "", nostr.Tag{"h", id}, nostr.Tag{"p", carol.Pub, "admin"})
		},
		"9001 remove": func(id string) *nostr.Event {
			return carol.Event(t, 9001, "", nostr.Tag{"h", id}, nostr.Tag{"p", alice.Pub})
		},
		"9002 edit": func(id string) *nostr.Event {
			return carol.Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"visibility", "open"})
		},
		"9008 delete": func(id string) *nostr.Event { return carol.Event(t, 9008, "", nostr.Tag{"h", id}) },
		"9009 invite": func(id string) *nostr.Event {
			return carol.Event(t, 9009, "", nostr.Tag{"h", id}, nostr.Tag{"code", "x"})
		},
		"9021 join": func(id string) *nostr.Event { return carol.Event(t, 9021, "", nostr.Tag{"h", id}) },
		"9021 with a code": func(id string) *nostr.Event {
			return carol.Event(t, 9021, "", nostr.Tag{"h", id}, nostr.Tag{"code", "x"})
		},
		"9022 leave": func(id string) *nostr.Event { return carol.Event(t, 9022, "", nostr.Tag{"h", id}) },
		"41011 add": func(id string) *nostr.Event {
			return carol.Event(t, 41011, "", nostr.Tag{"h", id}, nostr.Tag{"p", carol.Pub})
		},
		"9 message": func(id string) *nostr.Event { return carol.Event(t, 9, "let me in", nostr.Tag{"h", id}) },
	} {
		at := h.refusedText(ev(dm))
		sameAnswer(t, name+" at a DM id without a DM", at, dm, h.refusedText(ev(none)), none)
		sameAnswer(t, name+" at a missing id", at, dm, h.refusedText(ev(missing)), missing)
	}

	// Its participants change it only through the DM flows: NIP-29's group
	// management does not reach a DM, whoever sends it.
	for name, ev := range map[string]*nostr.Event{
		"9000": alice.Event(t, 9000, "", nostr.Tag{"h", dm}, nostr.Tag{"p", carol.Pub}),
		"9001": alice.Event(t, 9001, "", nostr.Tag{"h", dm}, nostr.Tag{"p", bob.Pub}),
		"9002": alice.Event(t, 9002, "", nostr.Tag{"h", dm}, nostr.Tag{"visibility", "open"}),
		"9008": alice.Event(t, 9008, "", nostr.Tag{"h", dm}),
		"9009": alice.Event(t, 9009, "", nostr.Tag{"h", dm}, nostr.Tag{"code", "x"}),
		"9021": bob.Event(t, 9021, "", nostr.Tag{"h", dm}),
		"9007": alice.Event(t, 9007, "", nostr.Tag{"h", dm}),
	} {
		if m := h.refusedText(ev); !strings.HasPrefix(m, "restricted: channel "+dm+" is a DM") && !strings.HasPrefix(m, "invalid: group id "+dm+" is reserved") {
			t.Fatalf("%s by a participant: %q", name, m)
		}
	}
	// Leaving is a participant's own, and the DM flow brings them back.
	h.ok(bob.Event(t, 9022, "", nostr.Tag{"h", dm}))
	h.ok(bob.Event(t, 41010, "", nostr.Tag{"p", alice.Pub}))
	if n := h.scalar(`SELECT count(*) FROM channel_members WHERE channel_id = $1 AND removed_at IS NULL`, dm); n != 2 {
		t.Fatalf("%d participants after bob came back", n)
	}
}

// Issue 36: a 41010 (or 41011) never joins or files into a channel the DM
// flows did not make, as a 9007 did at a DM's id before that id space was
// reserved: a third key's channel, of any type, which would read the DM.
func TestDMOpenNeverJoinsAnotherChannel(t *testing.T) {
	h := newHarness(t)
	alice, bob, carol := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ctx := context.Background()
	held := func(id, typ, visibility string, members ...string) {
		t.Helper()
		if _, err := h.db.Exec(ctx, `INSERT INTO channels (community_id, id, name, channel_type, visibility, creator, created_at, create_event)
VALUES ($1, $2, 'DM', $3, $4, $5, 1, $6)`, community, id, typ, visibility, carol.Pub, strings.Repeat("9", 64)); err != nil {
			t.Fatal(err)
		}
		for i, k := range append([]string{carol.Pub}, members...) {
			role := "member"
			if i == 0 {
				role = "owner"
			}
			if _, err := h.db.Exec(ctx, `INSERT INTO channel_members (community_id, channel_id, pubkey, role, added_at) VALUES ($1, $2, $3, $4, 1)`,
				community, id, k, role); err != nil {
				t.Fatal(err)
			}
		}
	}
	stream := nip29.DMChannelID(sorted(alice.Pub, bob.Pub))
	held(stream, "stream", "open")
	h.refused(alice.Event(t, 41010, "", nostr.Tag{"p", bob.Pub}), "restricted: the DM of these participants cannot be opened")

	// Of type dm, with alice in it: still not a DM, for 41010, 41011 and 41012.
	typed := nip29.DMChannelID(sorted(alice.Pub, carol.Pub))
	held(typed, "dm", "open", alice.Pub)
	h.refused(alice.Event(t, 41010, "", nostr.Tag{"p", carol.Pub}), "restricted: the DM of these participants cannot be opened")
	h.refused(alice.Event(t, 41011, "", nostr.Tag{"h", typed}, nostr.Tag{"p", bob.Pub}), "invalid: channel "+typed+" is not a DM")
	h.refused(alice.Event(t, 41012, "", nostr.Tag{"h", typed}), "invalid: channel "+typed+" is not a DM")
	// Nor can its holder run it as a group: NIP-29's management does not
	// reach a channel of type dm.
	h.refused(carol.Event(t, 9008, "", nostr.Tag{"h", typed}), "restricted: channel "+typed+" is a DM")
	h.refused(carol.Event(t, 9000, "", nostr.Tag{"h", typed}, nostr.Tag{"p", bob.Pub}), "restricted: channel "+typed+" is a DM")
}

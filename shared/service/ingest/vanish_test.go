package ingest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

const hashOnly, hashShared = "1111111111111111111111111111111111111111111111111111111111111111",
	"2222222222222222222222222222222222222222222222222222222222222222"

// A request to vanish (NIP-62) from its author deletes, in its one
// transaction, every event of the key in the community (messages, replies,
// reactions, notes, its older requests), the gift wraps addressed to it,
// the blobs only it uploaded (handed back for their objects) and its
// staged uploads, keeps everyone else's events and shared blobs, audits
// itself and answers OK with what went; the 62 stays as the tombstone.
func TestRequestToVanishDeletesEverythingOfTheKey(t *testing.T) {
	h, owner, ch := newChannelHarness(t)
	p := testkit.NewKey(t)
	ctx := context.Background()
	h.ok(p.Event(t, 9021, "", nostr.Tag{"h", ch}))
	qMsg := h.ok(owner.Event(t, 9, "from the owner", nostr.Tag{"h", ch})).Committed[0]
	pMsg := h.ok(p.Event(t, 9, "from p "+hashOnly, nostr.Tag{"h", ch})).Committed[0]
	h.ok(p.Event(t, 9, "p replies", nostr.Tag{"h", ch}, reply(qMsg.ID)))
	h.ok(p.Event(t, 7, "+", nostr.Tag{"h", ch}, nostr.Tag{"e", qMsg.ID}, nostr.Tag{"p", owner.Pub}))
	h.ok(p.Event(t, 1, "a note"))
	wrap := testkit.NewKey(t)
	h.ok(wrap.Event(t, 1059, "sealed", nostr.Tag{"p", p.Pub}))
	for _, b := range []struct{ hash, by string }{{hashOnly, p.Pub}, {hashShared, p.Pub}, {hashShared, owner.Pub}} {
		if _, _, err := h.st.BlobsInsert(ctx, records.NewBlob{Community: community, SHA256: b.hash, Type: "image/png", Pubkey: b.by, Size: 10, At: 1}); err != nil {
			t.Fatal(err)
		}
	}
	ownerEvents := h.scalar(`SELECT count(*) FROM events WHERE pubkey = $1`, owner.Pub)
	// A push subscription of p's (its effective state, as a stored 30390
	// leaves it) and a delivery pending to it: a key that vanished gets no
	// more callbacks.
	if _, err := h.db.Exec(ctx, `INSERT INTO push_subscriptions (community_id, pubkey, kind, d_tag, event_id, filters, target)
VALUES ($1, $2, 30390, 'phone', $3, '[]', 'https://push.example/cb')`, community, p.Pub, pMsg.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.Exec(ctx, `INSERT INTO push_deliveries (community_id, event_id, pubkey, kind, d_tag, target, next_at, created_at)
VALUES ($1, $2, $3, 30390, 'phone', 'https://push.example/cb', 0, 0)`, community, qMsg.ID, p.Pub); err != nil {
		t.Fatal(err)
	}

	req := p.Event(t, 62, "bye", nostr.Tag{"relay", "ALL_RELAYS"})
	out := h.ok2(req)
	if !strings.HasPrefix(out.Message, "vanished: 6 events, 1 blobs") {
		t.Fatalf("OK message %q", out.Message)
	}
	if out.Vanished == nil || len(out.Vanished.Blobs) != 1 || out.Vanished.Blobs[0] != hashOnly {
		t.Fatalf("vanished %+v, want the blob only p uploaded", out.Vanished)
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE pubkey = $1`, p.Pub); n != 1 {
		t.Fatalf("%d events of p left, want the tombstone only", n)
	}
	if n := h.scalar(`SELECT count(*) FROM push_subscriptions WHERE pubkey = $1`, p.Pub) + h.scalar(`SELECT count(*) FROM push_deliveries WHERE pubkey = $1`, p.Pub); n != 0 {
		t.Errorf("%d push subscriptions or deliveries of the vanished key left", n)
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE kind = 1059`); n != 0 {
		t.Fatal("the gift wrap to p is still stored")
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE pubkey = $1`, owner.Pub); n != ownerEvents {
		t.Fatalf("the owner's events went from %d to %d", ownerEvents, n)
	}
	if n := h.scalar(`SELECT count(*) FROM blobs`); n != 1 {
		t.Fatalf("%d blobs left, want the shared one", n)
	}
	if n := h.scalar(`SELECT count(*) FROM blob_owners WHERE pubkey = $1`, p.Pub) + h.scalar(`SELECT count(*) FROM blob_refs WHERE event_id = $1`, pMsg.ID); n != 0 {
		t.Fatal("p's blob rows are still there")
	}
	if n := h.scalar(`SELECT count(*) FROM moderation_actions WHERE event_id = $1 AND kind = 62 AND actor = $2 AND reason LIKE 'request to vanish%'`, req.ID, p.Pub); n != 1 {
		t.Fatal("no audit row")
	}
	h.noOrphans()
	// Its repeat is a duplicate, and changes nothing.
	if again := h.submit(req); !again.Accepted || !strings.HasPrefix(again.Message, "duplicate:") {
		t.Fatalf("repeat: %+v", again)
	}
}

// What a request to vanish deleted never comes back: a re-publish of the
// key's older event, or a repost (kind 6 and 16, in a group: the kinds
// this relay takes there) carrying it, is refused
// with blocked:; the key's new events, and reposts of other keys, are
// accepted.
func TestVanishedEventsDoNotComeBack(t *testing.T) {
	h, owner, ch := newChannelHarness(t)
	p := testkit.NewKey(t)
	now := time.Now()
	h.ok(p.Event(t, 9021, "", nostr.Tag{"h", ch}))
	old := p.EventAt(t, now.Add(-time.Minute), 9, "old", nostr.Tag{"h", ch})
	h.ok(old)
	note := p.EventAt(t, now.Add(-time.Minute), 1, "old note")
	h.ok(note)
	h.ok2(p.EventAt(t, now.Add(-10*time.Second), 62, "", nostr.Tag{"relay", "ALL_RELAYS"}))

	h.refused(old, "blocked:")
	h.refused(note, "blocked:")
	raw, _ := note.MarshalJSON()
	h.refused(owner.Event(t, 6, string(raw), nostr.Tag{"e", note.ID}, nostr.Tag{"p", p.Pub}, nostr.Tag{"h", ch}), "blocked:")
	h.refused(owner.Event(t, 16, string(raw), nostr.Tag{"e", note.ID}, nostr.Tag{"k", "1"}, nostr.Tag{"h", ch}), "blocked:")
	// An older request to vanish is covered by the newer one.
	h.refused(p.EventAt(t, now.Add(-20*time.Second), 62, "", nostr.Tag{"relay", "ALL_RELAYS"}), "blocked:")

	h.ok(p.Event(t, 9, "new", nostr.Tag{"h", ch}))
	other := h.ok(owner.Event(t, 1, "owner's note")).Committed[0]
	rawOther, _ := other.MarshalJSON()
	h.ok(p.Event(t, 6, string(rawOther), nostr.Tag{"e", other.ID}, nostr.Tag{"h", ch}))
}

// Attacks: a request to vanish signed by the key but relayed by another
// (or signed by another key), unauthenticated, naming another relay, or
// expiring, deletes nothing and is refused with its reason.
func TestRequestToVanishFromAnyoneElseDoesNothing(t *testing.T) {
	h, owner, ch := newChannelHarness(t)
	p := testkit.NewKey(t)
	h.ok(owner.Event(t, 9, "stays", nostr.Tag{"h", ch}))
	submitAs := func(authed, host string, ev *nostr.Event, want string) {
		t.Helper()
		before := h.counts()
		out, err := h.svc.SubmitAt(context.Background(), community, host, authed, ev)
		if err != nil {
			t.Fatal(err)
		}
		if out.Accepted || !strings.HasPrefix(out.Message, want) {
			t.Fatalf("got accepted=%v %q, want %s", out.Accepted, out.Message, want)
		}
		if h.counts() != before {
			t.Fatal("a refused request to vanish left a trace")
		}
	}
	all := nostr.Tag{"relay", "ALL_RELAYS"}
	const origin = "wss://relay.example"
	submitAs(p.Pub, origin, owner.Event(t, 62, "", all), "restricted:")
	submitAs("", origin, owner.Event(t, 62, "", all), "auth-required:")
	submitAs(owner.Pub, origin, owner.Event(t, 62, "", nostr.Tag{"relay", "wss://other.example"}), "invalid:")
	submitAs(owner.Pub, origin, owner.Event(t, 62, "", nostr.Tag{"relay", "wss://relay.example:1"}), "invalid:")
	submitAs(owner.Pub, "ws://127.0.0.1:8080", owner.Event(t, 62, "", nostr.Tag{"relay", "ws://127.0.0.1:1"}), "invalid:")
	submitAs(owner.Pub, origin, owner.Event(t, 62, ""), "invalid:")
	submitAs(owner.Pub, origin, owner.Event(t, 62, "", all, nostr.Tag{"expiration", "9999999999"}), "invalid:")
	// Named by this relay's URL, it is the owner's own and goes through.
	out, err := h.svc.SubmitAt(context.Background(), community, origin, owner.Pub, owner.Event(t, 62, "", nostr.Tag{"relay", "wss://relay.example/"}))
	if err != nil || !out.Accepted {
		t.Fatalf("%v %+v", err, out)
	}
}

// A banned key may still vanish: its data goes, its ban stays (its next
// event is refused as banned).
func TestBannedKeyMayVanishAndStaysBanned(t *testing.T) {
	h, _, ch := newChannelHarness(t)
	p := testkit.NewKey(t)
	ctx := context.Background()
	h.ok(p.Event(t, 9021, "", nostr.Tag{"h", ch}))
	h.ok(p.Event(t, 9, "before the ban", nostr.Tag{"h", ch}))
	if err := h.st.PubkeyRulesPut(ctx, community, p.Pub, "ban", "spam", time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
	h.refused(p.Event(t, 9, "while banned", nostr.Tag{"h", ch}), "blocked:")
	h.ok2(p.Event(t, 62, "", nostr.Tag{"relay", "ALL_RELAYS"}))
	if n := h.scalar(`SELECT count(*) FROM events WHERE pubkey = $1 AND kind <> 62`, p.Pub); n != 0 {
		t.Fatalf("%d events of the banned key left", n)
	}
	if n := h.scalar(`SELECT count(*) FROM community_pubkey_rules WHERE pubkey = $1 AND rule = 'ban'`, p.Pub); n != 1 {
		t.Fatal("the ban went with the key's data")
	}
	h.refused(p.EventAt(t, time.Now().Add(2*time.Second), 9, "after", nostr.Tag{"h", ch}), "blocked: this pubkey is banned")
}

// TestRequestToVanishTakesTheKeyOutOfLiveKitRoomsAndResigns39004: a key
// live in two groups' LiveKit rooms (two devices in one) vanishes: in the
// request's transaction its livekit_participants rows go, everyone else's
// stay, and each of the two groups' relay-signed 39004 is re-signed
// listing only who is still live, committed with the request (so delivered
// live). A group the key was never live in keeps its 39004 as it was.
func TestRequestToVanishTakesTheKeyOutOfLiveKitRoomsAndResigns39004(t *testing.T) {
	h := newHarness(t)
	h.svc = h.svc.WithLiveKit(true)
	ctx := context.Background()
	owner, p := testkit.NewKey(t), testkit.NewKey(t)
	rooms := []string{testkit.ChannelID(), testkit.ChannelID(), testkit.ChannelID()}
	for _, g := range rooms {
		h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", g}))
	}
	join := func(g, pub, device string) {
		t.Helper()
		if _, err := h.svc.LiveKitPresence(ctx, community, g, pub+":"+device, pub, true); err != nil {
			t.Fatalf("join %s: %v", g, err)
		}
	}
	join(rooms[0], p.Pub, "aa")
	join(rooms[0], p.Pub, "bb")
	join(rooms[0], owner.Pub, "cc")
	join(rooms[1], p.Pub, "dd")
	join(rooms[2], owner.Pub, "ee")
	participants := func(g string) (*nostr.Event, []string) {
		t.Helper()
		var raw string
		if err := h.db.QueryRow(ctx, `SELECT raw FROM events WHERE community_id = $1 AND kind = 39004 AND channel_id = $2`, community, g).Scan(&raw); err != nil {
			t.Fatalf("39004 of %s: %v", g, err)
		}
		var ev nostr.Event
		if err := ev.UnmarshalJSON([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		var pks []string
		for _, tag := range ev.Tags {
			if len(tag) >= 2 && tag[0] == "participant" {
				pks = append(pks, tag[1])
			}
		}
		return &ev, pks
	}
	untouched, _ := participants(rooms[2])

	out := h.ok2(p.Event(t, 62, "bye", nostr.Tag{"relay", "ALL_RELAYS"}))

	if n := h.scalar(`SELECT count(*) FROM livekit_participants WHERE pubkey = $1`, p.Pub); n != 0 {
		t.Fatalf("%d livekit_participants rows of the vanished key left", n)
	}
	if n := h.scalar(`SELECT count(*) FROM livekit_participants WHERE pubkey = $1`, owner.Pub); n != 2 {
		t.Fatalf("%d rows of the key still live, want its 2", n)
	}
	committed := map[string]bool{}
	for _, ev := range out.Committed {
		committed[ev.ID] = true
	}
	for g, want := range map[string][]string{rooms[0]: {owner.Pub}, rooms[1]: nil} {
		ev, pks := participants(g)
		if ok, _ := ev.CheckSignature(); !ok || ev.PubKey != h.relay.PublicKey() || !hasTag(ev, "d", g) {
			t.Fatalf("39004 of %s not relay-signed for the group: %v", g, ev)
		}
		if len(pks) != len(want) || (len(want) == 1 && pks[0] != want[0]) {
			t.Errorf("39004 of %s lists %v after the vanish, want %v", g, pks, want)
		}
		if !committed[ev.ID] {
			t.Errorf("the re-signed 39004 of %s is not committed with the request (not delivered)", g)
		}
	}
	if ev, _ := participants(rooms[2]); ev.ID != untouched.ID {
		t.Errorf("the 39004 of a group the key was never live in was re-signed")
	}
}

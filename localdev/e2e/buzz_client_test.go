package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/groupid"
)

// TestBuzzClient plays a Buzz desktop client end to end: it creates a
// channel, grants admin with the role tag (the new admin gets a 44100),
// pages the channel window with summaries and aux across several pages,
// opens a thread panel with aux, and follows live 39005 summaries it
// subscribed to by kind. Every window response is checked as the desktop
// parser checks it (parseWindow).
func TestBuzzClient(t *testing.T) {
	r := newRelay(t)
	alice, ra := loggedIn(t, r)
	bob, rb := loggedIn(t, r)
	ba, bb := newBridge(t, r, alice), newBridge(t, r, bob)

	notes, err := rb.Subscribe(ctxT(t), nostr.Filters{{Kinds: []int{44100, 44101}, Tags: nostr.TagMap{"p": {bob.Pub}}, Since: ptr(nostr.Now())}})
	if err != nil {
		t.Fatal(err)
	}
	eose(t, notes)

	// Create, then make bob an admin the way the desktop does.
	ch := createChannel(t, ra, alice, "private")
	publish(t, ra, alice, 9000, nostr.Tags{{"h", ch}, {"p", bob.Pub}, {"role", "admin"}}, "")
	added := next(t, notes)
	checkRelaySigned(t, r, *added)
	if c := parseMembership(t, *added); added.Kind != 44100 || c.Type != "member_added" || c.ChannelID != ch {
		t.Fatalf("bob's notification: kind %d %+v", added.Kind, c)
	}
	if role, ok := roleIn39002(stateHead(t, bb, 39002, ch), bob.Pub); !ok || role != "admin" {
		t.Fatalf("39002 role of bob %q, want admin", role)
	}
	if role := roleIn39001(stateHead(t, bb, 39001, ch), bob.Pub); role != "admin" {
		t.Fatalf("39001 role of bob %q, want admin", role)
	}

	// Live thread summaries, subscribed by kind.
	sums, err := rb.Subscribe(ctxT(t), nostr.Filters{{Kinds: []int{39005}, Tags: nostr.TagMap{"h": {ch}}, Since: ptr(nostr.Now())}})
	if err != nil {
		t.Fatal(err)
	}
	eose(t, sums)
	liveSummary := func(root string, want int) {
		t.Helper()
		ev := next(t, sums)
		checkRelaySigned(t, r, *ev)
		if ev.Tags.GetFirst([]string{"e", root}) == nil || ev.Tags.GetD() != root {
			t.Fatalf("live 39005 %v, want root %s", ev.Tags, root[:8])
		}
		if n := replyCount(t, *ev); n != want {
			t.Fatalf("live 39005 of %s: reply_count %d, want %d", root[:8], n, want)
		}
	}

	// Seven top-level messages, two of them in one second; newest first
	// is the window's order.
	now := nostr.Now()
	var top []nostr.Event
	for i := range 7 {
		at := now - 300 + nostr.Timestamp(i*10)
		if i == 4 {
			at = top[3].CreatedAt
		}
		ev := signedAt(t, alice, at, 9, nostr.Tags{{"h", ch}}, fmt.Sprint("message ", i))
		ba.accept(ev)
		top = append(top, ev)
	}
	want := slices.Clone(top)
	slices.SortFunc(want, func(a, b nostr.Event) int {
		if a.CreatedAt != b.CreatedAt {
			return int(b.CreatedAt - a.CreatedAt)
		}
		return strings.Compare(a.ID, b.ID)
	})

	// Replies (each pushes a 39005), reactions, an edit, and a reaction
	// taken back (the aux closure's second hop).
	threaded, other := top[1], top[4]
	var replies []nostr.Event
	for i := range 2 {
		rep := signedAt(t, bob, now-100+nostr.Timestamp(i), 9, nostr.Tags{{"h", ch}, {"e", threaded.ID, "", "reply"}}, fmt.Sprint("reply ", i))
		bb.accept(rep)
		replies = append(replies, rep)
		liveSummary(threaded.ID, i+1)
	}
	bb.accept(signed(t, bob, 9, nostr.Tags{{"h", ch}, {"e", other.ID, "", "reply"}}, "other reply"))
	liveSummary(other.ID, 1)
	react0 := signed(t, bob, 7, nostr.Tags{{"e", top[0].ID}, {"p", alice.Pub}}, "+")
	bb.accept(react0)
	taken := signed(t, bob, 7, nostr.Tags{{"e", top[2].ID}, {"p", alice.Pub}}, "-")
	bb.accept(taken)
	untake := signed(t, bob, 5, nostr.Tags{{"e", taken.ID}}, "")
	bb.accept(untake)
	edit := signed(t, alice, 40003, nostr.Tags{{"h", ch}, {"e", top[6].ID}}, "message 6, edited")
	ba.accept(edit)
	onRoot := signed(t, bob, 7, nostr.Tags{{"e", threaded.ID}, {"p", alice.Pub}}, "🔥")
	bb.accept(onRoot)
	onReply := signed(t, alice, 7, nostr.Tags{{"e", replies[0].ID}, {"p", bob.Pub}}, "+")
	ba.accept(onReply)

	// Page the window three rows at a time; the second request names the
	// channel in upper case, as a client may.
	var rows, aux []nostr.Event
	summaries := map[string]int{}
	var at *cursor
	pages := 0
	for {
		name := ch
		// (A UUID compares in any case; a NIP-29 id, BUZZ_E2E_GROUP_IDS=nip29,
		// only as sent.)
		if pages == 1 && groupid.Canonical(strings.ToUpper(ch)) == ch {
			name = strings.ToUpper(ch)
		}
		p := bb.window(name, 3, at, nil)
		pages++
		if len(p.rows) > 3 {
			t.Fatalf("page %d has %d rows, limit 3", pages, len(p.rows))
		}
		for _, a := range p.aux {
			if !targetsAny(a, p.rows, p.aux, map[string]string{taken.ID: top[2].ID}) {
				t.Errorf("page %d: aux kind %d targets no row of the page", pages, a.Kind)
			}
		}
		rows, aux = append(rows, p.rows...), append(aux, p.aux...)
		for id, n := range p.summaries {
			summaries[id] = n
		}
		if !p.hasMore {
			break
		}
		at = p.next
	}
	if pages != 3 {
		t.Fatalf("%d pages for 7 rows of 3, want 3", pages)
	}
	if strings.Join(idsOf(rows), ",") != strings.Join(idsOf(want), ",") {
		t.Fatalf("window rows are not the top-level messages newest first")
	}
	if len(summaries) != 2 || summaries[threaded.ID] != 2 || summaries[other.ID] != 1 {
		t.Fatalf("summaries %v, want 2 replies on %s and 1 on %s", summaries, threaded.ID[:8], other.ID[:8])
	}
	for _, ev := range []nostr.Event{react0, untake, edit, onRoot} {
		if !hasID(aux, ev.ID) {
			t.Errorf("window aux lacks kind %d %q", ev.Kind, ev.Content)
		}
	}
	if hasID(aux, taken.ID) || hasID(aux, onReply.ID) {
		t.Error("window aux has a deleted reaction or a reply's reaction")
	}

	// The thread panel, with aux: replies oldest first, the reactions on
	// the root and on a reply.
	panel := bb.query(map[string]any{"#e": []string{threaded.ID}, "depth_limit": 10, "include_aux": true})
	if got := ofKind(panel, 9); strings.Join(idsOf(got), ",") != strings.Join(idsOf(replies), ",") {
		t.Fatalf("thread panel replies %v", idsOf(got))
	}
	for _, ev := range []nostr.Event{onRoot, onReply} {
		if !hasID(panel, ev.ID) {
			t.Errorf("thread panel aux lacks the reaction %q", ev.Content)
		}
	}

	// Deleting a reply pushes the thread's new summary.
	ba.accept(signed(t, alice, 9005, nostr.Tags{{"h", ch}, {"e", replies[1].ID}}, ""))
	liveSummary(threaded.ID, 1)
	if p := bb.window(ch, 10, nil, nil); p.summaries[threaded.ID] != 1 {
		t.Fatalf("window summary after the deletion: %v", p.summaries)
	}
}

// targetsAny reports whether aux event a references (by e) a row, another
// aux event, or a deleted aux event (gone, so mapped to its row by gone).
func targetsAny(a nostr.Event, rows, aux []nostr.Event, gone map[string]string) bool {
	for _, tag := range a.Tags {
		if len(tag) < 2 || tag[0] != "e" {
			continue
		}
		if hasID(rows, tag[1]) || hasID(aux, tag[1]) || hasID(rows, gone[tag[1]]) {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

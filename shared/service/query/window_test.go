package query

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/nbd-wtf/go-nostr"
)

func windowBody(ch string, extra string) string {
	return fmt.Sprintf(`[{"kinds":[9],"#h":[%q],"top_level":true%s}]`, ch, extra)
}

// One window response: rows in (created_at DESC, id ASC) order, replies left
// out and broadcast replies kept, deleted rows excluded before the limit,
// then the aux closure (two hops, deleted hop-1 events' deletions included,
// deleted hop-1 events not), one 39005 per row with replies, one 39006.
func TestWindowResponse(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	bob := newUser()
	m1 := e.msg(alice, ch, t0+10, "one")
	m2 := e.msg(bob, ch, t0+11, "two")
	m3 := e.msg(alice, ch, t0+12, "three")
	gone := e.msg(alice, ch, t0+13, "deleted")
	e.del(alice, gone, t0+14)
	r1 := e.reply(bob, ch, m2, t0+15, "reply", false)
	r2 := e.reply(alice, ch, r1, t0+16, "nested", false)
	bc := e.reply(bob, ch, m1, t0+17, "broadcast", true)
	react := e.react(bob, m3, t0+18)
	edit := e.submit(alice, 40003, t0+19, "three!", nostr.Tag{"e", m3.ID}, nostr.Tag{"h", ch})
	react2 := e.react(alice, m3, t0+20)
	unreact := e.del(alice, react2, t0+21) // hop 2 on a deleted hop-1 event
	rReact := e.react(alice, r1, t0+22)    // on a reply: not in the closure of rows

	evs := e.query(alice, windowBody(ch, `,"limit":3,"include_aux":true,"include_summaries":true`))
	rows := byKind(evs, 9)
	if want := []string{bc.ID, m3.ID, m2.ID}; !slices.Equal(ids(rows), want) {
		t.Fatalf("rows %v, want broadcast, m3, m2 %v", ids(rows), want)
	}
	if has(evs, gone.ID) || has(evs, r1.ID) || has(evs, r2.ID) || has(evs, m1.ID) {
		t.Fatal("deleted row, reply or the probe row on the wire")
	}
	for _, want := range []*nostr.Event{react, edit, unreact} {
		if !has(evs, want.ID) {
			t.Fatalf("aux closure misses kind %d", want.Kind)
		}
	}
	if has(evs, react2.ID) || has(evs, rReact.ID) {
		t.Fatal("deleted hop-1 reaction or a reply's reaction in the closure")
	}
	sums := byKind(evs, kinds.ThreadSummary)
	if len(sums) != 1 || tagValue(sums[0], "e") != m2.ID || tagValue(sums[0], "d") != m2.ID || tagValue(sums[0], "h") != ch {
		t.Fatalf("want one 39005 for m2, got %v", sums)
	}
	e.relaySigned(sums[0])
	var s summaryJSON
	if err := json.Unmarshal([]byte(sums[0].Content), &s); err != nil {
		t.Fatal(err)
	}
	if s.ReplyCount != 1 || s.DescendantCount != 2 || s.LastReplyAt == nil || *s.LastReplyAt != t0+16 ||
		!slices.Equal(s.Participants, []string{alice.pk, bob.pk}) {
		t.Fatalf("summary %+v", s)
	}
	b, c := e.bounds(evs)
	if tagValue(b, "d") != ch+":head" || tagValue(b, "h") != ch {
		t.Fatalf("39006 tags %v", b.Tags)
	}
	if !c.HasMore || c.NextCursor == nil || c.NextCursor.ID != m2.ID || c.NextCursor.CreatedAt != t0+11 {
		t.Fatalf("39006 content %s", b.Content)
	}
	// Order on the wire: rows, aux, summaries, bounds.
	if evs[0].Kind != 9 || evs[len(evs)-1].Kind != kinds.WindowBounds || evs[len(evs)-2].Kind != kinds.ThreadSummary {
		t.Fatalf("wire order wrong: %v", kindsOf(evs))
	}

	// Next page from the cursor: m1 only, has_more false, no cursor, d echoes it.
	evs = e.query(alice, windowBody(ch, fmt.Sprintf(`,"limit":3,"until":%d,"before_id":%q`, t0+11, m2.ID)))
	if rows := byKind(evs, 9); !slices.Equal(ids(rows), []string{m1.ID}) {
		t.Fatalf("page 2 rows %v", ids(rows))
	}
	b, c = e.bounds(evs)
	if tagValue(b, "d") != fmt.Sprintf("%s:%d:%s", ch, t0+11, m2.ID) || c.HasMore || c.NextCursor != nil {
		t.Fatalf("page 2 bounds %v %s", b.Tags, b.Content)
	}
	if len(byKind(evs, kinds.ThreadSummary)) != 0 || len(byKind(evs, 7)) != 0 {
		t.Fatal("overlays or closure without include_summaries / include_aux")
	}
	if strings := string(mustJSON(t, b)); !json.Valid([]byte(strings)) {
		t.Fatal("bounds not JSON")
	}
}

func kindsOf(evs []*nostr.Event) []int {
	out := make([]int, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Dense seconds: 250 top-level rows, 50 per second, walked 25 at a time.
// Every row comes exactly once, in order; the exact-multiple final page says
// has_more false; limits default to 50, clamp at 200, and 0 means 1; the
// probe row of a page is never summarized.
func TestWindowDensePaging(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	var all []*nostr.Event
	for i := 0; i < 250; i++ {
		all = append(all, e.msg(alice, ch, t0+10+int64(i/50), fmt.Sprintf("m%d", i)))
	}
	// Expected order: created_at DESC, id ASC.
	slices.SortFunc(all, func(a, b *nostr.Event) int {
		if a.CreatedAt != b.CreatedAt {
			return int(b.CreatedAt - a.CreatedAt)
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	// The 26th row (page 1's probe) has a reply; page 1 must not summarize it.
	e.reply(alice, ch, all[25], t0+20, "on the probe row", false)

	var got []string
	cursor := ""
	pages := 0
	for {
		evs := e.query(alice, windowBody(ch, `,"limit":25,"include_summaries":true`+cursor))
		pages++
		rows := byKind(evs, 9)
		if len(rows) > 25 {
			t.Fatalf("page %d has %d rows", pages, len(rows))
		}
		if pages == 1 && len(byKind(evs, kinds.ThreadSummary)) != 0 {
			t.Fatal("the probe row was summarized")
		}
		if pages == 2 && len(byKind(evs, kinds.ThreadSummary)) != 1 {
			t.Fatal("page 2 misses the summary of its first row")
		}
		got = append(got, ids(rows)...)
		_, c := e.bounds(evs)
		if !c.HasMore {
			if c.NextCursor != nil {
				t.Fatal("next_cursor set with has_more false")
			}
			break
		}
		if c.NextCursor == nil || c.NextCursor.ID != rows[len(rows)-1].ID {
			t.Fatalf("page %d: next_cursor is not the last retained row", pages)
		}
		cursor = fmt.Sprintf(`,"until":%d,"before_id":%q`, c.NextCursor.CreatedAt, c.NextCursor.ID)
		if pages > 20 {
			t.Fatal("paging does not end")
		}
	}
	if pages != 10 {
		t.Fatalf("%d pages, want 10 (the last exact-multiple page must say has_more false)", pages)
	}
	if !slices.Equal(got, ids(all)) {
		t.Fatalf("walk returned %d rows, want all 250 once in order", len(got))
	}

	for _, c := range []struct {
		limit string
		want  int
	}{{"", 50}, {`,"limit":1000`, 200}, {`,"limit":0`, 1}, {`,"limit":7`, 7}} {
		evs := e.query(alice, windowBody(ch, c.limit))
		if n := len(byKind(evs, 9)); n != c.want {
			t.Fatalf("limit %q: %d rows, want %d", c.limit, n, c.want)
		}
	}
	// page is not honoured on the window path.
	if evs := e.query(alice, windowBody(ch, `,"limit":5,"page":3`)); !slices.Equal(ids(byKind(evs, 9)), ids(all[:5])) {
		t.Fatal("page changed the window")
	}
}

// An aux hop is drained page by page: with a page of 7 and 30 reactions
// (10 of them deleted, each deletion a hop-2 event) the closure is complete.
func TestWindowAuxDrained(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	m := e.msg(alice, ch, t0+10, "popular")
	var want []string
	for i := 0; i < 30; i++ {
		u := newUser()
		r := e.react(u, m, t0+11+int64(i%3))
		if i%3 == 0 {
			want = append(want, e.del(u, r, t0+20).ID)
		} else {
			want = append(want, r.ID)
		}
	}
	e.q.auxPage = 7
	evs := e.query(alice, windowBody(ch, `,"include_aux":true`))
	for _, id := range want {
		if !has(evs, id) {
			t.Fatalf("closure misses %s with page size 7", id)
		}
	}
	if n := len(byKind(evs, 7)) + len(byKind(evs, 5)); n != 30 {
		t.Fatalf("closure has %d events, want 30", n)
	}
}

// A hop over relayinfo.MaxAuxPerHop keeps exactly the cap's newest events in
// keyset order (created_at DESC, id ASC), and every aux statement asks the
// database for no more than the hop still has room for: the whole hop reads
// at most the cap's rows, whatever the page size.
func TestWindowAuxHopCapped(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	m := e.msg(alice, ch, t0+30, "very popular")
	var all []*nostr.Event
	for i := 0; i < relayinfo.MaxAuxPerHop+3; i++ {
		all = append(all, e.submit(newUser(), 7, t0+31+int64(i%7), "+", nostr.Tag{"e", m.ID}))
	}
	slices.SortFunc(all, func(a, b *nostr.Event) int {
		if a.CreatedAt != b.CreatedAt {
			return cmp.Compare(b.CreatedAt, a.CreatedAt)
		}
		return strings.Compare(a.ID, b.ID)
	})
	want := ids(all[:relayinfo.MaxAuxPerHop])
	for _, page := range []int{plainMaxLimit, 300} {
		e.q.auxPage = page
		var limits []int
		e.q.trace = func(sql string, args []any) {
			if strings.Contains(sql, "WITH tagged") {
				limits = append(limits, args[len(args)-1].(int))
			}
		}
		evs := e.query(alice, windowBody(ch, `,"limit":1,"include_aux":true`))
		e.q.trace = nil
		if got := ids(byKind(evs, 7)); !slices.Equal(got, want) {
			t.Fatalf("page %d: closure has %d reactions, want the %d newest in keyset order", page, len(got), len(want))
		}
		// Hop 1 reads up to the cap and stops; hop 2 (no deletions) reads
		// one short page.
		hop1 := 0
		for _, l := range limits[:len(limits)-1] {
			if l > page {
				t.Fatalf("page %d: an aux statement asked for %d rows", page, l)
			}
			hop1 += l
		}
		if hop1 != relayinfo.MaxAuxPerHop {
			t.Fatalf("page %d: hop 1 asked for %d rows in all (%v), want %d", page, hop1, limits, relayinfo.MaxAuxPerHop)
		}
	}
}

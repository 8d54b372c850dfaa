package query

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
)

type threadPage struct {
	rows, aux []string
	bounds    []*nostr.Event
	hasMore   bool
	next      *cursorJSON
}

func (e *env) threadWindow(reader user, ch, root string, limit int, at *cursorJSON) threadPage {
	e.t.Helper()
	f := map[string]any{"thread_window": true, "#h": []string{ch}, "#e": []string{root}, "kinds": []int{9}, "limit": limit, "include_aux": true}
	if at != nil {
		f["until"], f["before_id"] = at.CreatedAt, at.ID
	}
	body, _ := json.Marshal([]any{f})
	var p threadPage
	for _, ev := range e.query(reader, string(body)) {
		switch ev.Kind {
		case 9:
			p.rows = append(p.rows, ev.ID)
		case kinds.ThreadWindowBounds:
			p.bounds = append(p.bounds, ev)
			var c threadBoundsJSON
			if err := json.Unmarshal([]byte(ev.Content), &c); err != nil || c.Version != 1 || c.Direction != "older" {
				e.t.Fatalf("39007 content %s", ev.Content)
			}
			p.hasMore, p.next = c.HasMore, c.NextCursor
		default:
			p.aux = append(p.aux, ev.ID)
		}
	}
	return p
}

// The thread window as Buzz's bridge serves it: the root's replies at any
// depth, newest first, paged with the channel window's keyset; the probe
// row neither sent nor closed over; the aux closure of the root and the
// rows; one signed 39007 bound to the request; nothing for a channel the
// reader cannot read or a root outside the channel.
func TestThreadWindow(t *testing.T) {
	e, owner, ch := newChannelEnv(t)
	root := e.msg(owner, ch, t0+1, "root")
	var replies []*nostr.Event
	parent := root
	for i := range 5 {
		r := e.reply(owner, ch, parent, t0+10+int64(i), fmt.Sprint("reply ", i), false)
		replies = append(replies, r)
		if i == 2 {
			parent = r // replies 3 and 4 are deeper
		}
	}
	other := e.msg(owner, ch, t0+2, "another thread")
	e.reply(owner, ch, other, t0+30, "elsewhere", false)
	onRoot := e.react(owner, root, t0+40)
	onOldest := e.react(owner, replies[0], t0+41) // on the probe row of page 1
	onNewest := e.react(owner, replies[4], t0+42)
	undo := e.del(owner, onNewest, t0+43)

	p := e.threadWindow(owner, ch, root.ID, 4, nil)
	if want := []string{replies[4].ID, replies[3].ID, replies[2].ID, replies[1].ID}; !slices.Equal(p.rows, want) {
		t.Fatalf("page 1 rows %v, want %v", p.rows, want)
	}
	if !p.hasMore || p.next == nil || p.next.ID != replies[1].ID {
		t.Errorf("page 1: has_more %v next %+v, want the last row as the scan position", p.hasMore, p.next)
	}
	if !slices.Contains(p.aux, onRoot.ID) || !slices.Contains(p.aux, undo.ID) || slices.Contains(p.aux, onOldest.ID) || slices.Contains(p.aux, onNewest.ID) {
		t.Errorf("page 1 aux %v: want the root's reaction and the deletion, not the probe row's reaction nor the deleted one", p.aux)
	}
	if len(p.bounds) != 1 {
		t.Fatalf("%d bounds", len(p.bounds))
	}
	b := p.bounds[0]
	if ok, _ := b.CheckSignature(); !ok || b.PubKey != e.relay.PublicKey() {
		t.Error("39007 is not signed by the relay")
	}
	if d := b.Tags.GetD(); d != threadBinding(testHost, owner.pk, ch, root.ID, 4, 100, []int{9}, nil, true) || b.Tags.GetFirst([]string{"e", root.ID}) == nil || b.Tags.GetFirst([]string{"h", ch}) == nil {
		t.Errorf("39007 tags %v", b.Tags)
	}
	p2 := e.threadWindow(owner, ch, root.ID, 4, p.next)
	if !slices.Equal(p2.rows, []string{replies[0].ID}) || p2.hasMore || p2.next != nil {
		t.Errorf("page 2: rows %v has_more %v", p2.rows, p2.hasMore)
	}
	if d := p2.bounds[0].Tags.GetD(); d != threadBinding(testHost, owner.pk, ch, root.ID, 4, 100, []int{9}, &records.Cursor{CreatedAt: p.next.CreatedAt, ID: p.next.ID}, true) {
		t.Errorf("page 2 d %q", d)
	}
	// A thread without replies is a served, exhausted window.
	if p := e.threadWindow(owner, ch, e.msg(owner, ch, t0+50, "quiet").ID, 10, nil); len(p.rows) != 0 || len(p.bounds) != 1 || p.hasMore {
		t.Errorf("empty thread: %+v", p)
	}
	// Not served: an outsider of a private channel, a root of another
	// channel, a deleted root, a root that does not exist.
	priv := e.channel(owner, nostr.Tag{"visibility", "private"})
	proot := e.msg(owner, priv, t0+1, "p")
	e.reply(owner, priv, proot, t0+2, "pr", false)
	if p := e.threadWindow(newUser(), priv, proot.ID, 10, nil); len(p.rows)+len(p.bounds)+len(p.aux) != 0 {
		t.Errorf("outsider: %+v", p)
	}
	if p := e.threadWindow(owner, ch, proot.ID, 10, nil); len(p.rows)+len(p.bounds) != 0 {
		t.Errorf("root of another channel: %+v", p)
	}
	e.del(owner, other, t0+60)
	if p := e.threadWindow(owner, ch, other.ID, 10, nil); len(p.rows)+len(p.bounds) != 0 {
		t.Errorf("deleted root: %+v", p)
	}
	if p := e.threadWindow(owner, ch, strings.Repeat("a", 64), 10, nil); len(p.rows)+len(p.bounds) != 0 {
		t.Errorf("unknown root: %+v", p)
	}

	// Bad requests are 400s.
	h, r := ch, root.ID
	e.bad(`[{"thread_window":"yes","#h":["`+h+`"],"#e":["`+r+`"]}]`, "thread_window")
	e.bad(`[{"thread_window":true,"#e":["`+r+`"]}]`, "#h")
	e.bad(`[{"thread_window":true,"#h":["`+h+`"],"#e":["`+r+`","`+r+`"]}]`, "#e")
	e.bad(`[{"thread_window":true,"#h":["`+h+`"],"#e":["`+r+`"],"until":5}]`, "both until and before_id")
	five := strings.Repeat(`{"thread_window":true,"#h":["`+h+`"],"#e":["`+r+`"]},`, 5)
	e.bad("["+strings.TrimSuffix(five, ",")+"]", "at most 4 thread windows")
	e.bad(`[{"thread_window":true,"#h":["`+h+`"],"#e":["`+r+`"],"depth_limit":0}]`, "depth_limit")
	e.bad(`[{"thread_window":true,"#h":["`+h+`"],"#e":["`+r+`"],"depth_limit":101}]`, "depth_limit")
	e.bad(`[{"thread_window":true,"#h":["`+h+`"],"#e":["`+r+`"],"top_level":true}]`, "top_level")
	// depth_limit bounds the depth below the root: 1 is the direct replies.
	direct := e.query(owner, `[{"thread_window":true,"#h":["`+h+`"],"#e":["`+r+`"],"kinds":[9],"depth_limit":1}]`)
	var got []string
	for _, ev := range direct {
		if ev.Kind == 9 {
			got = append(got, ev.ID)
		}
	}
	if want := []string{replies[2].ID, replies[1].ID, replies[0].ID}; !slices.Equal(got, want) {
		t.Errorf("depth_limit 1 rows %v, want the direct replies %v", got, want)
	}
	// thread_window false is the legacy read.
	legacy := e.query(owner, `[{"thread_window":false,"#h":["`+h+`"],"#e":["`+r+`"],"depth_limit":10}]`)
	for _, ev := range legacy {
		if ev.Kind == kinds.ThreadWindowBounds {
			t.Error("thread_window false served a thread window")
		}
	}
}

// The 39007 d tag is Buzz's request binding: Buzz's own vector (buzz-core
// thread_window's binding test: a nil channel, root and reader "ab"×32,
// kinds [9], host relay.example, defaults filled in), and every argument
// changes it.
func TestThreadBinding(t *testing.T) {
	ab := strings.Repeat("ab", 32)
	nilChannel := "00000000-0000-0000-0000-000000000000"
	base := func() (string, string, string, string, int64, int64, []int, *records.Cursor, bool) {
		return "relay.example", ab, nilChannel, ab, 50, 100, []int{9}, nil, false
	}
	want := "tw:1:5252322dfd797ddb1d5f1150acd4cf914b9fc09e39bcf3048d25aed514b3546d"
	if got := threadBinding(base()); got != want {
		t.Fatalf("binding %s, want Buzz's %s", got, want)
	}
	cd := strings.Repeat("cd", 32)
	for name, change := range map[string]func(h, r, c, root *string, limit, depth *int64, k *[]int, cur **records.Cursor, aux *bool){
		"host":        func(h, _, _, _ *string, _, _ *int64, _ *[]int, _ **records.Cursor, _ *bool) { *h = "other.example" },
		"reader":      func(_, r, _, _ *string, _, _ *int64, _ *[]int, _ **records.Cursor, _ *bool) { *r = cd },
		"channel":     func(_, _, c, _ *string, _, _ *int64, _ *[]int, _ **records.Cursor, _ *bool) { *c = "general" },
		"root":        func(_, _, _, root *string, _, _ *int64, _ *[]int, _ **records.Cursor, _ *bool) { *root = cd },
		"limit":       func(_, _, _, _ *string, l, _ *int64, _ *[]int, _ **records.Cursor, _ *bool) { *l = 49 },
		"depth_limit": func(_, _, _, _ *string, _, d *int64, _ *[]int, _ **records.Cursor, _ *bool) { *d = 1 },
		"kinds":       func(_, _, _, _ *string, _, _ *int64, k *[]int, _ **records.Cursor, _ *bool) { *k = []int{40002} },
		"cursor": func(_, _, _, _ *string, _, _ *int64, _ *[]int, c **records.Cursor, _ *bool) {
			*c = &records.Cursor{CreatedAt: 0, ID: ab}
		},
		"include_aux": func(_, _, _, _ *string, _, _ *int64, _ *[]int, _ **records.Cursor, a *bool) { *a = true },
	} {
		h, r, c, root, limit, depth, k, cur, aux := base()
		change(&h, &r, &c, &root, &limit, &depth, &k, &cur, &aux)
		if threadBinding(h, r, c, root, limit, depth, k, cur, aux) == want {
			t.Errorf("%s does not change the binding", name)
		}
	}
}

// NIP-CW's algorithm statement by statement, for the thread window: the
// limit+1 probe runs after every predicate (kinds, authors, deletion), so
// an exact final page says has_more false even when replies the
// predicates drop lie beyond it; the cursor is the scan position (the last
// row retained), and the next page starts strictly after it, same-second
// replies ordered by id ascending; the mode of the community
// (thread_replies_in_channel) does not change the thread window's rows.
func TestThreadWindowNIPCWStatements(t *testing.T) {
	e, owner, ch := newChannelEnv(t)
	other := newUser()
	e.submit(other, 9021, t0, "", nostr.Tag{"h", ch}) // joins the open channel
	root := e.msg(owner, ch, t0+1, "root")
	// Two replies of kind 9 by the owner in the same second, and replies
	// the predicates drop: an older 40002, an older reply by another key,
	// an older deleted reply.
	same := []*nostr.Event{
		e.reply(owner, ch, root, t0+20, "same second a", false),
		e.reply(owner, ch, root, t0+20, "same second b", false),
	}
	slices.SortFunc(same, func(a, b *nostr.Event) int { return strings.Compare(a.ID, b.ID) })
	e.submit(owner, 40002, t0+10, "v2", nostr.Tag{"h", ch}, nostr.Tag{"e", root.ID, "", "reply"})
	e.reply(other, ch, root, t0+11, "by another key", false)
	gone := e.reply(owner, ch, root, t0+12, "deleted", false)
	e.del(owner, gone, t0+30)

	page := func(limit int, at *cursorJSON) threadPage {
		t.Helper()
		f := map[string]any{"thread_window": true, "#h": []string{ch}, "#e": []string{root.ID}, "kinds": []int{9}, "authors": []string{owner.pk}, "limit": limit}
		if at != nil {
			f["until"], f["before_id"] = at.CreatedAt, at.ID
		}
		body, _ := json.Marshal([]any{f})
		var p threadPage
		for _, ev := range e.query(owner, string(body)) {
			if ev.Kind == kinds.ThreadWindowBounds {
				var c threadBoundsJSON
				_ = json.Unmarshal([]byte(ev.Content), &c)
				p.hasMore, p.next = c.HasMore, c.NextCursor
				p.bounds = append(p.bounds, ev)
			} else {
				p.rows = append(p.rows, ev.ID)
			}
		}
		return p
	}
	// Exact final page: two rows match, limit 2, nothing after them does.
	if p := page(2, nil); !slices.Equal(p.rows, []string{same[0].ID, same[1].ID}) || p.hasMore || p.next != nil {
		t.Errorf("exact page: rows %v has_more %v next %+v, want both same-second replies (id ascending) and has_more false", p.rows, p.hasMore, p.next)
	}
	// Limit 1: the cursor is the row retained; the next page is the other
	// reply of the same second, then nothing.
	p1 := page(1, nil)
	if !slices.Equal(p1.rows, []string{same[0].ID}) || !p1.hasMore || p1.next == nil || p1.next.ID != same[0].ID || p1.next.CreatedAt != t0+20 {
		t.Fatalf("page 1: rows %v has_more %v next %+v", p1.rows, p1.hasMore, p1.next)
	}
	p2 := page(1, p1.next)
	if !slices.Equal(p2.rows, []string{same[1].ID}) || p2.hasMore || p2.next != nil {
		t.Errorf("page 2: rows %v has_more %v next %+v", p2.rows, p2.hasMore, p2.next)
	}
	// The community's row mode is the channel window's: the thread window
	// serves the same rows under either.
	e.rowMode(true)
	if p := page(2, nil); !slices.Equal(p.rows, []string{same[0].ID, same[1].ID}) || p.hasMore {
		t.Errorf("with thread_replies_in_channel: rows %v has_more %v", p.rows, p.hasMore)
	}
}

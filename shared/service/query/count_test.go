package query

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/nbd-wtf/go-nostr"
)

// COUNT of a filter equals the number of events the same filter returns,
// for every kind of plan, with and without since/until and cursors. The
// window is walked to its end (COUNT ignores the limit); the others are
// asked with a limit above the fixture's size. Relay-signed overlays
// (39005/39006) are synthesized, not stored, and so are not counted.
func TestCountMatchesRows(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	bob := newUser()
	e.addMember(alice, ch, bob)

	var rows []*nostr.Event
	for i := 0; i < 7; i++ {
		rows = append(rows, e.msg(alice, ch, t0+10+int64(i), fmt.Sprintf("hello row %d", i)))
	}
	root := rows[2]
	r1 := e.reply(bob, ch, root, t0+20, "hello first", false)
	e.reply(alice, ch, r1, t0+21, "nested", false)
	e.reply(bob, ch, root, t0+22, "hello broadcast", true)
	gone := e.reply(bob, ch, root, t0+23, "deleted", false)
	e.del(bob, gone, t0+24)
	e.reply(alice, ch, root, t0+25, "hello last", false)
	e.react(bob, rows[0], t0+26)

	h := fmt.Sprintf(`"#h":[%q]`, ch)
	thread := fmt.Sprintf(`"#e":[%q]`, root.ID)
	for _, c := range []struct{ name, filter string }{
		{"plain", `{"kinds":[9],` + h + `,"limit":1000}`},
		{"plain since/until", `{"kinds":[9],` + h + fmt.Sprintf(`,"since":%d,"until":%d,"limit":1000}`, t0+12, t0+22)},
		{"plain any kind", `{` + h + `,"limit":1000}`},
		{"plain until", `{"kinds":[9],` + h + fmt.Sprintf(`,"until":%d,"limit":1000}`, t0+14)},
		{"plain cursor", `{"kinds":[9],` + h + fmt.Sprintf(`,"until":%d,"before_id":%q,"limit":1000}`, rows[4].CreatedAt, rows[4].ID)},
		{"plain #e", fmt.Sprintf(`{"#e":[%q],"limit":1000}`, rows[0].ID)},
		{"search", `{"search":"hello",` + h + `,"limit":1000}`},
		{"search since", `{"search":"hello",` + h + fmt.Sprintf(`,"since":%d,"limit":1000}`, t0+15)},
		{"search until", `{"search":"hello",` + h + fmt.Sprintf(`,"until":%d,"limit":1000}`, t0+20)},
		{"search cursor", `{"search":"hello",` + h + fmt.Sprintf(`,"until":%d,"before_id":%q,"limit":1000}`, rows[3].CreatedAt, rows[3].ID)},
		{"search no channel", `{"search":"hello","limit":1000}`},
		{"thread", `{` + thread + `,"depth_limit":5,"limit":500}`},
		{"thread depth 1", `{` + thread + `,"depth_limit":1,"limit":500}`},
		{"thread since/until", `{` + thread + fmt.Sprintf(`,"depth_limit":5,"since":%d,"until":%d,"limit":500}`, t0+21, t0+22)},
		{"thread until", `{` + thread + fmt.Sprintf(`,"depth_limit":5,"until":%d,"limit":500}`, t0+22)},
		{"thread cursor", `{` + thread + fmt.Sprintf(`,"depth_limit":5,"thread_cursor":%d,"limit":500}`, t0+21)},
		{"thread cursor id", `{` + thread + fmt.Sprintf(`,"depth_limit":5,"thread_cursor":%d,"thread_cursor_id":%q,"limit":500}`, r1.CreatedAt, r1.ID)},
		{"thread #h", `{` + thread + `,` + h + `,"depth_limit":5,"limit":500}`},
		{"thread kinds+authors", `{` + thread + fmt.Sprintf(`,"depth_limit":5,"kinds":[9],"authors":[%q],"limit":500}`, bob.pk)},
		{"window", `{"kinds":[9],` + h + `,"top_level":true,"limit":2}`},
		{"window since", `{"kinds":[9],` + h + fmt.Sprintf(`,"top_level":true,"since":%d,"limit":2}`, t0+13)},
		{"window search", `{"kinds":[9],` + h + `,"top_level":true,"search":"hello","limit":2}`},
		{"window until cursor since", `{"kinds":[9],` + h + fmt.Sprintf(`,"top_level":true,"since":%d,"until":%d,"before_id":%q,"limit":2}`, t0+11, rows[5].CreatedAt, rows[5].ID)},
		{"window cursor", `{"kinds":[9],` + h + fmt.Sprintf(`,"top_level":true,"until":%d,"before_id":%q,"limit":2}`, rows[5].CreatedAt, rows[5].ID)},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := "[" + c.filter + "]"
			got := returned(e, bob, c.filter)
			if n := e.count(bob, body); n != int64(got) {
				t.Fatalf("COUNT %s = %d, the query returns %d", body, n, got)
			}
			if got == 0 {
				t.Fatalf("fixture matches nothing for %s", body)
			}
		})
	}
}

// WebSocket COUNT equals the number of events the same REQ returns.
func TestWebSocketCountMatchesReq(t *testing.T) {
	e := newEnv(t)
	alice, bob := newUser(), newUser()
	ch := e.channel(alice, nostr.Tag{"visibility", "private"})
	e.addMember(alice, ch, bob)
	var last *nostr.Event
	for i := 0; i < 5; i++ {
		last = e.msg(alice, ch, t0+10+int64(i), fmt.Sprintf("hello row %d", i))
	}
	e.react(bob, last, t0+20)
	since, until := nostr.Timestamp(t0+11), nostr.Timestamp(t0+13)
	h := nostr.TagMap{"h": {ch}}
	for name, f := range map[string]nostr.Filter{
		"kinds #h":     {Kinds: []int{9}, Tags: h},
		"#h":           {Tags: h},
		"since/until":  {Tags: h, Since: &since, Until: &until},
		"search":       {Search: "hello", Tags: h},
		"#e":           {Tags: nostr.TagMap{"e": {last.ID}}},
		"authors kind": {Authors: []string{alice.pk}, Kinds: []int{9}},
	} {
		for _, reader := range []user{bob, newUser()} {
			raws, err := e.q.Req(e.ctx, "default", reader.pk, []nostr.Filter{f})
			if err != nil {
				t.Fatal(err)
			}
			n, err := e.q.CountFilters(e.ctx, "default", reader.pk, []nostr.Filter{f})
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(len(raws)) {
				t.Errorf("%s: COUNT = %d, REQ returns %d", name, n, len(raws))
			}
			if reader == bob && len(raws) == 0 {
				t.Errorf("%s: fixture matches nothing", name)
			}
		}
	}
}

// returned is how many stored events filter returns to reader; a window is
// walked page by page until has_more is false.
func returned(e *env, reader user, filter string) int {
	e.t.Helper()
	var f map[string]any
	if err := json.Unmarshal([]byte(filter), &f); err != nil {
		e.t.Fatal(err)
	}
	stored := func(evs []*nostr.Event) int {
		n := 0
		for _, ev := range evs {
			if ev.Kind != kinds.ThreadSummary && ev.Kind != kinds.WindowBounds {
				n++
			}
		}
		return n
	}
	if f["top_level"] != true {
		return stored(e.query(reader, "["+filter+"]"))
	}
	n := 0
	for page := 0; ; page++ {
		if page > 50 {
			e.t.Fatal("window paging does not end")
		}
		b, err := json.Marshal(f)
		if err != nil {
			e.t.Fatal(err)
		}
		evs := e.query(reader, "["+string(b)+"]")
		n += stored(evs)
		_, c := e.bounds(evs)
		if !c.HasMore {
			return n
		}
		f["until"], f["before_id"] = c.NextCursor.CreatedAt, c.NextCursor.ID
	}
}

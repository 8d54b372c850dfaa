package query

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// NIP-01 matching, newest first with ties by id, before_id keyset, page,
// #h through the target's channel for reactions and deletions, limits.
func TestPlainFilters(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	bob := newUser()
	var msgs []*nostr.Event
	for i := 0; i < 6; i++ {
		msgs = append(msgs, e.msg([]user{alice, bob}[i%2], ch, t0+10+int64(i/3), fmt.Sprintf("m%d", i)))
	}
	react := e.react(bob, msgs[0], t0+20)
	deletion := e.del(bob, msgs[5], t0+21)
	note := e.submit(bob, 1, t0+22, "a public note")

	order := func(evs []*nostr.Event) []*nostr.Event {
		out := slices.Clone(evs)
		slices.SortFunc(out, func(a, b *nostr.Event) int {
			if a.CreatedAt != b.CreatedAt {
				return int(b.CreatedAt - a.CreatedAt)
			}
			if a.ID < b.ID {
				return -1
			}
			return 1
		})
		return out
	}
	live := order(msgs[:5]) // msgs[5] is deleted
	got := e.query(alice, `[{"kinds":[9]}]`)
	if !slices.Equal(ids(got), ids(live)) {
		t.Fatalf("kinds 9 order %v, want %v", ids(got), ids(live))
	}
	if got := e.query(alice, fmt.Sprintf(`[{"#h":[%q],"kinds":[7,5]}]`, ch)); len(got) != 2 || !has(got, react.ID) || !has(got, deletion.ID) {
		t.Fatal("#h does not match reactions and deletions through their target's channel")
	}
	if got := e.query(alice, fmt.Sprintf(`[{"authors":[%q],"kinds":[9]}]`, bob.pk)); len(got) != 2 {
		t.Fatalf("authors: %d", len(got))
	}
	if got := e.query(alice, fmt.Sprintf(`[{"ids":[%q,%q]}]`, msgs[1].ID, msgs[5].ID)); len(got) != 1 {
		t.Fatal("ids: a deleted event is readable")
	}
	if got := e.query(alice, fmt.Sprintf(`[{"kinds":[9],"since":%d,"until":%d}]`, t0+11, t0+11)); len(got) != 2 {
		t.Fatalf("since/until: %d", len(got))
	}
	if got := e.query(alice, fmt.Sprintf(`[{"#e":[%q]}]`, msgs[0].ID)); len(got) != 1 || got[0].ID != react.ID {
		t.Fatal("#e tag match")
	}
	if got := e.query(alice, `[{"kinds":[1]}]`); len(got) != 1 || got[0].ID != note.ID {
		t.Fatal("an event outside any channel is public")
	}
	if got := e.query(alice, `[{"kinds":[9],"ids":[]}]`); len(got) != 0 {
		t.Fatal("an empty list matches nothing")
	}
	// before_id: strictly after (until, id) in (created_at DESC, id ASC).
	c := live[1]
	got = e.query(alice, fmt.Sprintf(`[{"kinds":[9],"until":%d,"before_id":%q}]`, c.CreatedAt, c.ID))
	if !slices.Equal(ids(got), ids(live[2:])) {
		t.Fatalf("before_id page %v, want %v", ids(got), ids(live[2:]))
	}
	// page: 1-based pages of limit.
	got = e.query(alice, `[{"kinds":[9],"limit":2,"page":2}]`)
	if !slices.Equal(ids(got), ids(live[2:4])) {
		t.Fatal("page 2")
	}
	if got := e.query(alice, `[{"kinds":[9],"limit":0}]`); len(got) != 0 {
		t.Fatal("limit 0")
	}
	// Each event once across filters, in serving order.
	got = e.query(alice, `[{"kinds":[9],"limit":1},{"kinds":[9]}]`)
	if len(got) != 5 {
		t.Fatalf("overlapping filters returned %d events, want 5 distinct", len(got))
	}
	// COUNT: distinct events over all filters, limit ignored.
	if n := e.count(alice, `[{"kinds":[9],"limit":1},{"kinds":[9,7]}]`); n != 6 {
		t.Fatalf("count %d, want 6", n)
	}
	// Plain limit defaults to and clamps at 1000.
	p, _ := newPlainPlan(&bridgeFilter{}, plainMaxLimit)
	big := int64(5000)
	q, _ := newPlainPlan(&bridgeFilter{Limit: &big}, plainMaxLimit)
	if p.limit != 1000 || q.limit != 1000 {
		t.Fatal("plain limit default/clamp")
	}
}

// Search over Postgres full-text search; REQ and COUNT over nostr.Filter.
func TestSearchReqCount(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	a := e.msg(alice, ch, t0+10, "Deploy the relay today")
	e.msg(alice, ch, t0+11, "lunch plans")
	got := e.query(alice, `[{"search":"deploy relay"}]`)
	if len(got) != 1 || got[0].ID != a.ID {
		t.Fatalf("search: %v", ids(got))
	}
	raws, err := e.q.Req(e.ctx, "default", alice.pk, []nostr.Filter{{Search: "deploy"}, {Search: "lunch"}})
	if err != nil || len(raws) != 2 {
		t.Fatalf("REQ: %d, %v", len(raws), err)
	}
	// A search is a request of its own (as Buzz serves it).
	if _, err := e.q.Req(e.ctx, "default", alice.pk, []nostr.Filter{{Search: "deploy"}, {Kinds: []int{9}, Limit: 1}}); err == nil || !strings.HasPrefix(err.Error(), "invalid:") {
		t.Fatalf("REQ mixing search and non-search filters: %v, want invalid:", err)
	}
	n, err := e.q.CountFilters(e.ctx, "default", alice.pk, []nostr.Filter{{Kinds: []int{9}}})
	if err != nil || n != 2 {
		t.Fatalf("COUNT: %d, %v", n, err)
	}
	if raws, _ := e.q.Req(e.ctx, "default", alice.pk, []nostr.Filter{{Kinds: []int{9}, LimitZero: true}}); len(raws) != 0 {
		t.Fatal("REQ limit 0")
	}
	if _, err := e.q.Req(e.ctx, "default", alice.pk, []nostr.Filter{{IDs: []string{"xyz"}}}); err == nil {
		t.Fatal("REQ with a bad id accepted")
	}
}

// NIP-CL discovery: #P, #t label, #t type, #d; tags are matched before the
// limit; only the current head per channel.
func TestDiscovery(t *testing.T) {
	e := newEnv(t)
	agent, other := newUser(), newUser()
	labeled := e.channel(agent, nostr.Tag{"t", "agent-config"})
	forum := e.channel(other, nostr.Tag{"channel_type", "forum"})
	for i := 0; i < 20; i++ { // newer channels that do not match
		e.channel(other)
	}
	e.submit(agent, 9002, t0+5, "", nostr.Tag{"h", labeled}, nostr.Tag{"about", "edited"}) // new head

	one := func(body, want string) {
		t.Helper()
		got := e.query(agent, body)
		if len(got) != 1 || tagValue(got[0], "d") != want {
			t.Fatalf("%s: %d events", body, len(got))
		}
	}
	one(fmt.Sprintf(`[{"kinds":[39000],"#P":[%q],"limit":1}]`, agent.pk), labeled)
	one(`[{"kinds":[39000],"#t":["agent-config"],"limit":1}]`, labeled)
	one(fmt.Sprintf(`[{"kinds":[39000],"#P":[%q],"#t":["agent-config"]}]`, agent.pk), labeled)
	one(`[{"kinds":[39000],"#t":["forum"],"limit":1}]`, forum)
	one(fmt.Sprintf(`[{"kinds":[39000],"#d":[%q]}]`, labeled), labeled)
	got := e.query(agent, fmt.Sprintf(`[{"kinds":[39000],"#d":[%q]}]`, labeled))
	if tagValue(got[0], "about") != "edited" {
		t.Fatal("not the current head")
	}
	if n := e.count(agent, `[{"kinds":[39000]}]`); n != 22 {
		t.Fatalf("one head per channel: %d 39000s, want 22", n)
	}
}

// The thread panel: replies ascending by (created_at, id) under one root,
// thread_cursor + thread_cursor_id (and the camelCase spelling), -1 = from
// the start, depth_limit, include_aux, and ThreadSummary.
func TestThreadPanel(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	bob := newUser()
	root := e.msg(alice, ch, t0+10, "root")
	var replies []*nostr.Event
	for i := 0; i < 9; i++ {
		replies = append(replies, e.reply([]user{alice, bob}[i%2], ch, root, t0+11+int64(i/3), fmt.Sprintf("r%d", i), false))
	}
	nested := e.reply(bob, ch, replies[0], t0+20, "nested", false)
	react := e.react(alice, replies[1], t0+21)
	slices.SortFunc(replies, func(a, b *nostr.Event) int {
		if a.CreatedAt != b.CreatedAt {
			return int(a.CreatedAt - b.CreatedAt)
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	all := append(slices.Clone(replies), nested)

	var got []string
	cursor := `,"thread_cursor":-1`
	for page := 0; page < 10; page++ {
		evs := e.query(alice, fmt.Sprintf(`[{"#e":[%q],"depth_limit":64,"limit":4%s}]`, root.ID, cursor))
		if len(evs) == 0 {
			break
		}
		got = append(got, ids(evs)...)
		last := evs[len(evs)-1]
		if page%2 == 0 {
			cursor = fmt.Sprintf(`,"thread_cursor":%d,"thread_cursor_id":%q`, last.CreatedAt, last.ID)
		} else {
			cursor = fmt.Sprintf(`,"threadCursor":%d,"threadCursorId":%q`, last.CreatedAt, last.ID)
		}
	}
	if !slices.Equal(got, ids(all)) {
		t.Fatalf("thread walk %d replies, want %d in order", len(got), len(all))
	}
	if evs := e.query(alice, fmt.Sprintf(`[{"#e":[%q],"depth_limit":1}]`, root.ID)); has(evs, nested.ID) || len(evs) != 9 {
		t.Fatal("depth_limit 1 must leave out depth-2 replies")
	}
	evs := e.query(alice, fmt.Sprintf(`[{"#e":[%q],"depth_limit":64,"include_aux":true}]`, root.ID))
	if !has(evs, react.ID) || has(evs, root.ID) {
		t.Fatal("thread include_aux: reaction missing, or the root returned")
	}
	if n := e.count(alice, fmt.Sprintf(`[{"#e":[%q],"depth_limit":64}]`, root.ID)); n != 10 {
		t.Fatalf("thread COUNT %d", n)
	}
	tp, _ := newThreadPlan(&bridgeFilter{Filter: filter.Filter{Tags: map[string][]string{"e": {root.ID}}}, DepthLimit: new(int64)})
	big := int64(9999)
	tq, _ := newThreadPlan(&bridgeFilter{Filter: filter.Filter{Tags: map[string][]string{"e": {root.ID}}}, DepthLimit: new(int64), Limit: &big})
	if tp.limit != 100 || tq.limit != 500 {
		t.Fatal("thread limit default 100, max 500")
	}

	sum, err := e.q.ThreadSummary(e.ctx, "default", root.ID)
	if err != nil || sum == nil {
		t.Fatalf("ThreadSummary: %v", err)
	}
	e.relaySigned(sum)
	var s summaryJSON
	_ = json.Unmarshal([]byte(sum.Content), &s)
	if s.ReplyCount != 9 || s.DescendantCount != 10 || len(s.Participants) != 2 || s.Participants[0] != bob.pk {
		t.Fatalf("summary %+v", s)
	}
	// A root without replies (its last reply deleted) has a summary of 0.
	zero, err := e.q.ThreadSummary(e.ctx, "default", nested.ID)
	if err != nil || zero == nil {
		t.Fatalf("ThreadSummary of a root without replies: %v, %v", zero, err)
	}
	if _ = json.Unmarshal([]byte(zero.Content), &s); s.ReplyCount != 0 || s.DescendantCount != 0 {
		t.Fatalf("summary of a root without replies %+v", s)
	}
	if none, err := e.q.ThreadSummary(e.ctx, "default", strings.Repeat("ab", 32)); none != nil || err != nil {
		t.Fatal("ThreadSummary of an unknown root must be nil, nil")
	}
}

// Window filters are served first, whatever their place in the request.
func TestWindowServedFirst(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	m := e.msg(alice, ch, t0+10, "x")
	note := e.submit(alice, 1, t0+11, "note")
	evs := e.query(alice, fmt.Sprintf(`[{"kinds":[1]},{"kinds":[9],"#h":[%q],"top_level":true},{"kinds":[9]}]`, ch))
	if len(evs) != 3 || evs[0].ID != m.ID || evs[1].Kind != kinds.WindowBounds || evs[2].ID != note.ID {
		t.Fatalf("serving order %v", kindsOf(evs))
	}
}

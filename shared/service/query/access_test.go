package query

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// A non-member of a private and hidden channel gets nothing of it from any
// path: window rows and overlays, aux, summaries, thread panel, plain
// filters, discovery, COUNT, search and WebSocket REQ/COUNT. A member gets
// all of it. (Issue 28: only NIP-29's hidden flag hides the metadata; a
// private channel that is not hidden is TestPrivateNotHidden. Before, every
// private channel was created this way.)
func TestPrivateChannelAccess(t *testing.T) {
	e := newEnv(t)
	owner, member, outsider := newUser(), newUser(), newUser()
	ch := e.channel(owner, nostr.Tag{"visibility", "private"}, nostr.Tag{"t", "secret-label"},
		nostr.Tag{"private"}, nostr.Tag{"restricted"}, nostr.Tag{"closed"}, nostr.Tag{"hidden"})
	e.addMember(owner, ch, member)
	root := e.msg(owner, ch, t0+10, "zebra secret")
	rep := e.reply(member, ch, root, t0+11, "zebra reply", false)
	react := e.react(member, root, t0+12)

	paths := map[string]string{
		"window":   windowBody(ch, `,"include_aux":true,"include_summaries":true`),
		"thread":   fmt.Sprintf(`[{"#e":[%q],"depth_limit":10,"include_aux":true}]`, root.ID),
		"plain #h": fmt.Sprintf(`[{"#h":[%q]}]`, ch),
		"plain":    `[{"kinds":[9,7]}]`,
		"ids":      fmt.Sprintf(`[{"ids":[%q,%q,%q]}]`, root.ID, rep.ID, react.ID),
		"#e":       fmt.Sprintf(`[{"#e":[%q]}]`, root.ID),
		"#P":       fmt.Sprintf(`[{"kinds":[39000],"#P":[%q]}]`, owner.pk),
		"#t":       `[{"kinds":[39000],"#t":["secret-label"]}]`,
		"#d":       fmt.Sprintf(`[{"kinds":[39000,39001,39002],"#d":[%q]}]`, ch),
		"39002 #p": fmt.Sprintf(`[{"kinds":[39002],"#p":[%q]}]`, member.pk),
		"search":   `[{"search":"zebra"}]`,
	}
	for name, body := range paths {
		if evs := e.query(outsider, body); len(evs) != 0 {
			t.Errorf("%s: outsider got %d events (kinds %v)", name, len(evs), kindsOf(evs))
		}
		if n := e.count(outsider, body); n != 0 {
			t.Errorf("%s: outsider COUNT %d", name, n)
		}
		if evs := e.query(member, body); len(evs) == 0 {
			t.Errorf("%s: member got nothing", name)
		}
	}
	f := nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {ch}}}
	raws, err := e.q.Req(e.ctx, "default", outsider.pk, []nostr.Filter{f})
	if err != nil || len(raws) != 0 {
		t.Fatalf("REQ outsider: %d events, %v", len(raws), err)
	}
	if n, err := e.q.CountFilters(e.ctx, "default", outsider.pk, []nostr.Filter{f}); err != nil || n != 0 {
		t.Fatalf("COUNT outsider: %d, %v", n, err)
	}
	if raws, err := e.q.Req(e.ctx, "default", member.pk, []nostr.Filter{f}); err != nil || len(raws) != 2 {
		t.Fatalf("REQ member: %d events, %v", len(raws), err)
	}

	// Removed from the channel: nothing any more, but the 44101 is theirs.
	e.submit(owner, 9001, t0+20, "", nostr.Tag{"h", ch}, nostr.Tag{"p", member.pk})
	if evs := e.query(member, paths["window"]); len(evs) != 0 {
		t.Fatalf("removed member still reads the window")
	}
	notes := e.query(member, `[{"kinds":[44100,44101]}]`)
	if len(byKind(notes, 44100)) != 1 || len(byKind(notes, 44101)) != 1 {
		t.Fatalf("member notifications: kinds %v", kindsOf(notes))
	}
	if evs := e.query(owner, `[{"kinds":[44100,44101]}]`); len(evs) != 0 {
		t.Fatalf("44100/44101 readable by someone other than their p")
	}
}

// A private channel that is not hidden (NIP-29's private without hidden; no
// longer Buzz's visibility=private, which is hidden since issue 36: see
// TestBuzzPrivateChannelInvisibleToNonMembers): a non-member reads its
// metadata (39000-39003) by every discovery path, and none of its messages,
// reactions or threads.
func TestPrivateNotHidden(t *testing.T) {
	e := newEnv(t)
	owner, member, outsider := newUser(), newUser(), newUser()
	ch := e.channel(owner, nostr.Tag{"private"}, nostr.Tag{"restricted"}, nostr.Tag{"closed"}, nostr.Tag{"t", "secret-label"})
	e.addMember(owner, ch, member)
	root := e.msg(owner, ch, t0+10, "zebra secret")
	e.react(member, root, t0+12)
	for name, c := range map[string]struct {
		body  string
		kinds []int
	}{
		"window":   {windowBody(ch, `,"include_aux":true,"include_summaries":true`), nil},
		"plain #h": {fmt.Sprintf(`[{"#h":[%q]}]`, ch), []int{39000, 39001, 39002, 39003}},
		"plain":    {`[{"kinds":[9,7]}]`, nil},
		"#d":       {fmt.Sprintf(`[{"kinds":[39000,39001,39002],"#d":[%q]}]`, ch), []int{39000, 39001, 39002}},
		"#t":       {`[{"kinds":[39000],"#t":["secret-label"]}]`, []int{39000}},
		"search":   {`[{"search":"zebra"}]`, nil},
	} {
		evs := e.query(outsider, c.body)
		got := kindsOf(evs)
		if len(got) != len(c.kinds) {
			t.Errorf("%s: outsider got kinds %v, want %v", name, got, c.kinds)
		}
		for _, k := range got {
			if k < 39000 || k > 39003 {
				t.Errorf("%s: outsider got a kind %d event of a private channel", name, k)
			}
		}
		if n := e.count(outsider, c.body); n != int64(len(c.kinds)) {
			t.Errorf("%s: outsider COUNT %d, want %d", name, n, len(c.kinds))
		}
	}
}

// A Buzz client's private channel (visibility=private, no NIP-29 flag tags)
// is invisible to a non-member on every read path, its metadata included,
// as on Buzz's own relay: its 39000-39003 by #d, by {}, by #p, by ids, by
// label, over POST /query, /count, REQ and COUNT; a member reads them
// (issue 36).
func TestBuzzPrivateChannelInvisibleToNonMembers(t *testing.T) {
	e := newEnv(t)
	owner, member, outsider := newUser(), newUser(), newUser()
	ch := e.channel(owner, nostr.Tag{"visibility", "private"}, nostr.Tag{"t", "secret-label"})
	e.addMember(owner, ch, member)
	state := e.query(member, fmt.Sprintf(`[{"kinds":[39000,39001,39002,39003],"#d":[%q]}]`, ch))
	if len(state) != 4 {
		t.Fatalf("member reads %d of the channel's 39000-39003, want 4", len(state))
	}
	var stateIDs []string
	for _, ev := range state {
		stateIDs = append(stateIDs, ev.ID)
	}
	ids, _ := json.Marshal(stateIDs)
	filters := map[string]string{
		"#d":       fmt.Sprintf(`{"kinds":[39000,39001,39002,39003],"#d":[%q]}`, ch),
		"#d kinds": fmt.Sprintf(`{"#d":[%q]}`, ch),
		"{}":       `{}`,
		"kinds":    `{"kinds":[39000,39001,39002,39003]}`,
		"#p":       fmt.Sprintf(`{"kinds":[39002],"#p":[%q]}`, member.pk),
		"#p any":   fmt.Sprintf(`{"#p":[%q]}`, owner.pk),
		"#P":       fmt.Sprintf(`{"kinds":[39000],"#P":[%q]}`, owner.pk),
		"#t":       `{"kinds":[39000],"#t":["secret-label"]}`,
		"ids":      fmt.Sprintf(`{"ids":%s}`, ids),
		"#h":       fmt.Sprintf(`{"#h":[%q]}`, ch),
	}
	for name, f := range filters {
		for _, ev := range e.query(outsider, "["+f+"]") {
			if tagValue(ev, "d") == ch || tagValue(ev, "h") == ch {
				t.Errorf("%s: a non-member reads the private channel's kind %d over /query", name, ev.Kind)
			}
		}
		var nf nostr.Filter
		if err := json.Unmarshal([]byte(f), &nf); err != nil {
			t.Fatal(err)
		}
		raws, err := e.q.Req(e.ctx, "default", outsider.pk, []nostr.Filter{nf})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range decode(t, raws) {
			if tagValue(ev, "d") == ch || tagValue(ev, "h") == ch {
				t.Errorf("%s: a non-member reads the private channel's kind %d over REQ", name, ev.Kind)
			}
		}
		// COUNT: the non-member counts what the same filter counts once
		// the channel is gone from the relay's view (nothing of it).
		reqN, err := e.q.CountFilters(e.ctx, "default", outsider.pk, []nostr.Filter{nf})
		if err != nil {
			t.Fatal(err)
		}
		if httpN := e.count(outsider, "["+f+"]"); httpN != reqN || httpN != int64(returned(e, outsider, f)) {
			t.Errorf("%s: COUNT %d, /count %d, rows %d", name, reqN, httpN, returned(e, outsider, f))
		}
	}
	for _, name := range []string{"#d", "ids", "#p"} {
		if evs := e.query(member, "["+filters[name]+"]"); len(evs) == 0 {
			t.Errorf("%s: the member reads nothing", name)
		}
	}
}

// NIP-CL system channels are left out of every filter that does not name
// them (#h, or #d with kinds all in 39000-39003), decided per filter, also
// for 39002 #p, COUNT and search; a member who names one reads it.
func TestSystemChannels(t *testing.T) {
	e := newEnv(t)
	agent := newUser()
	sys := e.channel(agent, nostr.Tag{"channel_type", "system"}, nostr.Tag{"t", "agent-config"})
	pub := e.channel(agent, nostr.Tag{"t", "agent-config"})
	sm := e.msg(agent, sys, t0+10, "walrus config")
	pm := e.msg(agent, pub, t0+11, "walrus chat")

	notNamed := map[string]string{
		"kinds":    `[{"kinds":[9]}]`,
		"39000":    `[{"kinds":[39000]}]`,
		"#t":       `[{"kinds":[39000],"#t":["agent-config"]}]`,
		"#P":       fmt.Sprintf(`[{"kinds":[39000],"#P":[%q]}]`, agent.pk),
		"39002 #p": fmt.Sprintf(`[{"kinds":[39002],"#p":[%q]}]`, agent.pk),
		"search":   `[{"search":"walrus"}]`,
		"#d mixed": fmt.Sprintf(`[{"kinds":[39000,9],"#d":[%q]}]`, sys),
	}
	for name, body := range notNamed {
		for _, ev := range e.query(agent, body) {
			if ev.ID == sm.ID || tagValue(ev, "d") == sys {
				t.Errorf("%s: system channel event kind %d returned", name, ev.Kind)
			}
		}
	}
	if n := e.count(agent, `[{"kinds":[9]}]`); n != 1 {
		t.Fatalf("COUNT kinds 9 = %d, want 1 (system channel left out)", n)
	}
	if n := e.count(agent, `[{"search":"walrus"}]`); n != 1 {
		t.Fatalf("COUNT search = %d, want 1", n)
	}
	if evs := e.query(agent, `[{"kinds":[39000],"#t":["agent-config"]}]`); len(evs) != 1 || tagValue(evs[0], "d") != pub {
		t.Fatalf("label discovery should find only the stream channel")
	}
	// Named: #h, #d on channel-state kinds, the window.
	if evs := e.query(agent, fmt.Sprintf(`[{"kinds":[9],"#h":[%q]}]`, sys)); len(evs) != 1 || evs[0].ID != sm.ID {
		t.Fatalf("#h naming the system channel: %v", kindsOf(evs))
	}
	if evs := e.query(agent, fmt.Sprintf(`[{"kinds":[39000,39001,39002],"#d":[%q]}]`, sys)); len(evs) != 3 {
		t.Fatalf("#d naming the system channel: %d events", len(evs))
	}
	if evs := e.query(agent, windowBody(sys, "")); len(byKind(evs, 9)) != 1 {
		t.Fatal("window on a named system channel")
	}
	// Per filter: naming it in one filter does not add it to another.
	evs := e.query(agent, fmt.Sprintf(`[{"kinds":[9],"#h":[%q]},{"kinds":[9]}]`, sys))
	if len(evs) != 2 || !has(evs, sm.ID) || !has(evs, pm.ID) {
		t.Fatalf("per-filter naming: %d events", len(evs))
	}
	if n := e.count(agent, fmt.Sprintf(`[{"kinds":[9],"#h":[%q]},{"kinds":[9]}]`, sys)); n != 2 {
		t.Fatalf("per-filter COUNT %d", n)
	}
	// An outsider cannot read the private system channel even by naming it.
	if evs := e.query(newUser(), fmt.Sprintf(`[{"#h":[%q]}]`, sys)); len(evs) != 0 {
		t.Fatal("outsider reads a private system channel")
	}
}

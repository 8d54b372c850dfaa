package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// The Buzz client's kinds (issue 29), each read model played end to end the
// way Buzz's own test client exercises it (crates/buzz-test-client/tests:
// author-only reminders and push leases, shared personas, p-gated agent
// metrics and observer frames, forum threads, read state): post, read back
// by the author and by another key over REQ, /query, COUNT, ids look-ups,
// search and live delivery, and delete; the other key gets nothing and
// cannot learn the event exists.

// watcher is a key's live subscription to everything from now on; a
// sentinel note published after the events under test arrives first when
// none of them reached it.
type watcher struct {
	t   *testing.T
	sub *nostr.Subscription
}

func watch(t *testing.T, rl *nostr.Relay) *watcher {
	t.Helper()
	sub, err := rl.Subscribe(ctxT(t), nostr.Filters{{Since: ptr(nostr.Now() - 1)}})
	if err != nil {
		t.Fatal(err)
	}
	// Stored events of the last second come first (go-nostr sends EOSE only
	// once they are taken).
	for {
		select {
		case <-sub.Events:
			continue
		case <-sub.EndOfStoredEvents:
		case reason := <-sub.ClosedReason:
			t.Fatalf("live subscription closed: %s", reason)
		case <-time.After(wait):
			t.Fatal("no EOSE")
		}
		return &watcher{t: t, sub: sub}
	}
}

// sees reports whether the watcher gets id live: it publishes a sentinel
// note by u after the event under test and reads until the sentinel has
// come and a short grace has passed (go-nostr hands events over from one
// goroutine each, so their order is not guaranteed), or until id comes.
func (w *watcher) sees(rl *nostr.Relay, u user, id string) bool {
	w.t.Helper()
	sentinel := publish(w.t, rl, u, 1, nil, "sentinel "+id[:8])
	deadline := time.After(wait)
	var grace <-chan time.Time
	for {
		select {
		case ev := <-w.sub.Events:
			switch ev.ID {
			case id:
				return true
			case sentinel.ID:
				grace = time.After(300 * time.Millisecond)
			}
		case reason := <-w.sub.ClosedReason:
			w.t.Fatalf("live subscription closed: %s", reason)
		case <-grace:
			return false
		case <-deadline:
			w.t.Fatal("the sentinel never arrived")
		}
	}
}

// readable is every read path a reader has to one event: REQ by kind and
// by id over WebSocket, /query by kind, by author and by id, COUNT over
// /count by kind and by id.
func readable(t *testing.T, rl *nostr.Relay, b *bridge, ev nostr.Event) map[string]bool {
	t.Helper()
	reqSees := func(f nostr.Filter) bool {
		evs, err := rl.QuerySync(ctxT(t), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.ID == ev.ID {
				return true
			}
		}
		return false
	}
	return map[string]bool{
		"REQ kinds":     reqSees(nostr.Filter{Kinds: []int{ev.Kind}}),
		"REQ ids":       reqSees(nostr.Filter{IDs: []string{ev.ID}}),
		"REQ kindless":  reqSees(nostr.Filter{Authors: []string{ev.PubKey}}),
		"query kinds":   hasID(b.query(map[string]any{"kinds": []int{ev.Kind}}), ev.ID),
		"query ids":     hasID(b.query(map[string]any{"ids": []string{ev.ID}}), ev.ID),
		"query authors": hasID(b.query(map[string]any{"authors": []string{ev.PubKey}}), ev.ID),
		"count kinds":   countSees(t, b, map[string]any{"kinds": []int{ev.Kind}, "authors": []string{ev.PubKey}}),
		"count ids":     b.count(map[string]any{"ids": []string{ev.ID}}) == 1,
	}
}

// countSees reports whether /count of f counts one event; a refusal with
// restricted: (NIP-ER: another key's reminders) counts none.
func countSees(t *testing.T, b *bridge, f map[string]any) bool {
	t.Helper()
	body, _ := json.Marshal([]any{f})
	status, out := b.post("/count", body)
	if status == http.StatusForbidden && strings.Contains(string(out), `"restricted: `) {
		return false
	}
	if status != http.StatusOK {
		t.Fatalf("/count %s: %d %s", body, status, out)
	}
	var c struct{ Count int }
	_ = json.Unmarshal(out, &c)
	return c.Count == 1
}

func wantReadable(t *testing.T, who string, got map[string]bool, want bool) {
	t.Helper()
	for path, ok := range got {
		if ok != want {
			t.Errorf("%s over %s: readable %v, want %v", who, path, ok, want)
		}
	}
}

// notStoredAnswer is the answer to a reaction and a deletion naming id by
// b's key, with id replaced by ID: compared with the answer for an id
// nothing is stored under, it must be the same (no existence oracle).
func notStoredAnswer(t *testing.T, b *bridge, id string) string {
	t.Helper()
	var out []string
	for _, ev := range []nostr.Event{
		signed(t, b.u, 7, nostr.Tags{{"e", id}}, "+"),
		signed(t, b.u, 5, nostr.Tags{{"e", id}}, ""),
	} {
		a := b.submit(ev)
		if a.Accepted {
			t.Fatalf("kind %d naming %s accepted", ev.Kind, id[:8])
		}
		out = append(out, strings.ReplaceAll(a.Message, id, "ID"))
	}
	return strings.Join(out, " | ")
}

func unknownID(t *testing.T, u user) string {
	return signed(t, u, 1, nil, "never stored").ID
}

func TestBuzzAuthorOnlyKinds(t *testing.T) {
	r := newRelay(t)
	alice, ra := loggedIn(t, r)
	bob, rb := loggedIn(t, r)
	ba, bb := newBridge(t, r, alice), newBridge(t, r, bob)
	wa, wb := watch(t, ra), watch(t, rb)

	for _, kind := range []int{30300, 30350, 30179} {
		tags := nostr.Tags{{"d", "slot-1"}}
		if kind == 30300 {
			tags = append(tags, nostr.Tag{"not_before", "1893456000"})
		}
		ev := signed(t, alice, kind, tags, "nip44-ciphertext")
		ba.accept(ev)

		wantReadable(t, "the author", readable(t, ra, ba, ev), true)
		wantReadable(t, "another key", readable(t, rb, bb, ev), false)
		if !wa.sees(ra, alice, ev.ID) {
			t.Errorf("kind %d: the author's live subscription missed it", kind)
		}
		if wb.sees(ra, alice, ev.ID) {
			t.Errorf("kind %d: another key's live subscription got it", kind)
		}
		if got, want := notStoredAnswer(t, bb, ev.ID), notStoredAnswer(t, bb, unknownID(t, bob)); got != want {
			t.Errorf("kind %d: another key's reaction and deletion answer %q, for an unknown id %q", kind, got, want)
		}

		// A newer version replaces it; the author's deletion hides it.
		newer := signedAt(t, alice, ev.CreatedAt+1, kind, tags, "nip44-ciphertext v2")
		ba.accept(newer)
		if evs := ba.query(map[string]any{"kinds": []int{kind}, "authors": []string{alice.Pub}}); len(evs) != 1 || evs[0].ID != newer.ID {
			t.Errorf("kind %d after replacement: %v, want only the newer version", kind, idsOf(evs))
		}
		ba.accept(signed(t, alice, 5, nostr.Tags{{"e", newer.ID}}, ""))
		if evs := ba.query(map[string]any{"ids": []string{newer.ID}}); len(evs) != 0 {
			t.Errorf("kind %d: deleted, still read by its author", kind)
		}
		// The deletion itself is not readable: its e tag would name the id.
		if evs := bb.query(map[string]any{"kinds": []int{5}, "#e": []string{newer.ID}}); len(evs) != 0 {
			t.Errorf("kind %d: another key reads the deletion naming it", kind)
		}
		addr := fmt.Sprintf("%d:%s:slot-2", kind, alice.Pub)
		v := signed(t, alice, kind, nostr.Tags{{"d", "slot-2"}}, "x")
		ba.accept(v)
		ba.accept(signed(t, alice, 5, nostr.Tags{{"a", addr}}, ""))
		if evs := ba.query(map[string]any{"ids": []string{v.ID}}); len(evs) != 0 {
			t.Errorf("kind %d: deleted by address, still read by its author", kind)
		}
		if evs := bb.query(map[string]any{"kinds": []int{5}, "authors": []string{alice.Pub}}); len(evs) != 0 {
			t.Errorf("kind %d: another key reads %d deletions of author-only events", kind, len(evs))
		}
	}
	// NIP-ER's write rules (malformed or duplicate not_before, expiration
	// not after it, the d tag) and its read rule: a read of only another
	// key's reminders is refused with restricted: on every path, whether
	// any exists or not, and a not_before in the future is no refusal.
	for _, c := range []struct {
		tags nostr.Tags
		want string
	}{
		{nostr.Tags{{"d", "x"}, {"not_before", "0123"}}, "invalid: malformed not_before"},
		{nostr.Tags{{"d", "x"}, {"not_before", "1"}, {"not_before", "2"}}, "invalid: malformed not_before"},
		{nostr.Tags{{"d", "x"}, {"not_before", "1893456000"}, {"expiration", "1893456000"}}, "invalid: expiration before not_before"},
		{nostr.Tags{{"not_before", "1893456000"}}, "invalid: "},
	} {
		if a := ba.submit(signed(t, alice, 30300, c.tags, "c")); a.Accepted || !strings.HasPrefix(a.Message, c.want) {
			t.Errorf("reminder %v: accepted %v %q, want %q", c.tags, a.Accepted, a.Message, c.want)
		}
	}
	due := signed(t, alice, 30300, nostr.Tags{{"d", "later"}, {"not_before", "4102444800"}, {"expiration", "4102444801"}}, "c")
	ba.accept(due)
	for _, author := range []string{alice.Pub, unknownID(t, bob)} {
		f := map[string]any{"kinds": []int{30300}, "authors": []string{author}}
		body, _ := json.Marshal([]any{f})
		for _, path := range []string{"/query", "/count"} {
			if status, out := bb.post(path, body); status != http.StatusForbidden || !strings.HasPrefix(string(out), `{"error":"restricted: `) {
				t.Errorf("another key's reminders over %s: %d %s", path, status, out)
			}
		}
		for _, verb := range []string{"REQ", "COUNT"} {
			rc := dialRaw(t, r)
			rc.send(`["REQ","warmup",{"kinds":[1],"limit":0}]`)
			challenge := str(t, rc.expect("AUTH")[1])
			rc.expect("CLOSED")
			rc.auth(r, bob, challenge)
			rc.sendJSON([]any{verb, "r", f})
			if c := rc.expect("CLOSED"); !strings.HasPrefix(str(t, c[2]), "restricted: ") {
				t.Errorf("another key's reminders over %s: %s", verb, joinRaw(c))
			}
		}
	}
	// Author-only kinds are never searchable, even by their author.
	ev := signed(t, alice, 30300, nostr.Tags{{"d", "s"}}, "zanzibar")
	ba.accept(ev)
	if evs := ba.query(map[string]any{"search": "zanzibar"}); len(evs) != 0 {
		t.Errorf("an author-only event is in search results: %v", idsOf(evs))
	}
}

func TestBuzzSharedGatedKinds(t *testing.T) {
	r := newRelay(t)
	alice, ra := loggedIn(t, r)
	bob, rb := loggedIn(t, r)
	ba, bb := newBridge(t, r, alice), newBridge(t, r, bob)
	wb := watch(t, rb)

	persona := signed(t, alice, 30175, nostr.Tags{{"d", "helper"}}, `{"display_name":"Helper"}`)
	ba.accept(persona)
	wantReadable(t, "the author, unshared", readable(t, ra, ba, persona), true)
	wantReadable(t, "another key, unshared", readable(t, rb, bb, persona), false)
	if wb.sees(ra, alice, persona.ID) {
		t.Error("an unshared persona reached another key live")
	}

	shared := signedAt(t, alice, persona.CreatedAt+1, 30175, nostr.Tags{{"d", "helper"}, {"shared", "true"}}, `{"display_name":"Helper"}`)
	ba.accept(shared)
	if !wb.sees(ra, alice, shared.ID) {
		t.Error("a shared persona did not reach another key live")
	}
	wantReadable(t, "another key, shared", readable(t, rb, bb, shared), true)
	if evs := bb.query(map[string]any{"ids": []string{persona.ID}}); len(evs) != 0 {
		t.Error("the replaced unshared version is still readable")
	}

	// Buzz's ingest checks on the shared tag, and the catalog's d tag.
	for name, tags := range map[string]nostr.Tags{
		"shared false":         {{"d", "x"}, {"shared", "false"}},
		"two shared tags":      {{"d", "x"}, {"shared", "true"}, {"shared", "true"}},
		"three-element":        {{"d", "x"}, {"shared", "true", "yes"}},
		"catalog without d":    {{"shared", "true"}},
		"catalog with empty d": {{"d", ""}},
	} {
		kind := 30175
		if strings.HasPrefix(name, "catalog") {
			kind = 30178
		}
		a := ba.submit(signed(t, alice, kind, tags, "{}"))
		if a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
			t.Errorf("%s: %+v, want invalid:", name, a)
		}
	}
	catalog := signed(t, alice, 30178, nostr.Tags{{"d", "team-1"}}, `{"name":"team"}`)
	ba.accept(catalog)
	wantReadable(t, "another key, unshared catalog", readable(t, rb, bb, catalog), false)
}

func TestBuzzPGatedKinds(t *testing.T) {
	r := newRelay(t)
	agent, ra := loggedIn(t, r)
	owner, ro := loggedIn(t, r)
	carol, rc := loggedIn(t, r)
	ba, bo, bc := newBridge(t, r, agent), newBridge(t, r, owner), newBridge(t, r, carol)
	wo, wc := watch(t, ro), watch(t, rc)

	metric := signed(t, agent, 44200, nostr.Tags{{"p", owner.Pub}, {"agent", agent.Pub}}, "nip44-ciphertext")
	ba.accept(metric)
	wantReadable(t, "the p", readable(t, ro, bo, metric), true)
	wantReadable(t, "a third key", readable(t, rc, bc, metric), false)
	wantReadable(t, "the author, not the p", readable(t, ra, ba, metric), false)
	if !wo.sees(ra, agent, metric.ID) || wc.sees(ra, agent, metric.ID) {
		t.Error("44200 live: only its p gets it")
	}
	if got, want := notStoredAnswer(t, bc, metric.ID), notStoredAnswer(t, bc, unknownID(t, carol)); got != want {
		t.Errorf("a third key's reaction and deletion answer %q, for an unknown id %q", got, want)
	}
	if a := ba.submit(signed(t, agent, 44200, nostr.Tags{{"agent", agent.Pub}}, "x")); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
		t.Errorf("44200 without p: %+v, want invalid:", a)
	}

	// The observer frame is ephemeral: live only, only to its p.
	frame := signed(t, agent, 24200, nostr.Tags{{"p", owner.Pub}}, "frame")
	if err := ra.Publish(ctxT(t), frame); err != nil {
		t.Fatal(err)
	}
	if !wo.sees(ra, agent, frame.ID) || wc.sees(ra, agent, frame.ID) {
		t.Error("24200 live: only its p gets it")
	}
	if evs := bo.query(map[string]any{"ids": []string{frame.ID}}); len(evs) != 0 {
		t.Error("an ephemeral frame was stored")
	}
	wantPrefix(t, refused(t, ra, signed(t, agent, 24200, nil, "frame")), "invalid:")

	// The relay-signed 30622 is the relay's alone.
	wantPrefix(t, refused(t, ra, signed(t, agent, 30622, nostr.Tags{{"d", agent.Pub}, {"p", agent.Pub}}, "")), "restricted:")
}

func TestBuzzUserOwnedState(t *testing.T) {
	r := newRelay(t)
	alice, ra := loggedIn(t, r)
	bob, rb := loggedIn(t, r)
	ba, bb := newBridge(t, r, alice), newBridge(t, r, bob)
	wb := watch(t, rb)
	for _, c := range []struct {
		kind int
		tags nostr.Tags
	}{
		{30078, nostr.Tags{{"d", "read-state:desktop"}, {"t", "read-state"}}},
		{10100, nil},
		{30315, nostr.Tags{{"d", "general"}}},
		{30174, nostr.Tags{{"d", "hmac"}}},
		{30176, nostr.Tags{{"d", "team"}}},
		{30177, nostr.Tags{{"d", bob.Pub}}},
		// 30620 is a workflow definition filed in its channel, checked as
		// Buzz checks it (workflows_test.go), no longer user-owned state.
	} {
		ev := signed(t, alice, c.kind, c.tags, "v1")
		ba.accept(ev)
		wantReadable(t, "another key", readable(t, rb, bb, ev), true)
		if !wb.sees(ra, alice, ev.ID) {
			t.Errorf("kind %d did not reach another key live", c.kind)
		}
		newer := signedAt(t, alice, ev.CreatedAt+1, c.kind, c.tags, "v2")
		ba.accept(newer)
		if evs := bb.query(map[string]any{"kinds": []int{c.kind}, "authors": []string{alice.Pub}}); len(evs) != 1 || evs[0].ID != newer.ID {
			t.Errorf("kind %d: %d versions read, want the newest only", c.kind, len(evs))
		}
		if a := ba.submit(ev); !strings.HasPrefix(a.Message, "duplicate:") {
			t.Errorf("kind %d: an older version answers %q, want duplicate:", c.kind, a.Message)
		}
	}
}

func TestBuzzChannelContent(t *testing.T) {
	r := newRelay(t)
	alice, ra := loggedIn(t, r)
	bob, rb := loggedIn(t, r)
	ba, bb := newBridge(t, r, alice), newBridge(t, r, bob)
	ch := newChannel(t, ba, "private")
	member, bm := newMember(t, r, ba, ch)
	rm := dial(t, r)
	login(t, rm, member)
	wm, wb := watch(t, rm), watch(t, rb)

	msg := signed(t, alice, 40002, nostr.Tags{{"h", ch}}, "quokka sighting")
	ba.accept(msg)
	if !wm.sees(ra, alice, msg.ID) || wb.sees(ra, alice, msg.ID) {
		t.Error("40002 live: the member gets it, the outsider does not")
	}
	wantReadable(t, "a member", readable(t, rm, bm, msg), true)
	wantReadable(t, "an outsider", readable(t, rb, bb, msg), false)
	if evs := bm.query(map[string]any{"search": "quokka"}); !hasID(evs, msg.ID) {
		t.Error("40002 is not searchable by a member")
	}
	if evs := bb.query(map[string]any{"search": "quokka"}); len(evs) != 0 {
		t.Error("an outsider finds a private 40002 by search")
	}

	// The forum: a post, a comment replying to it, a vote in the aux closure.
	post := signed(t, alice, 45001, nostr.Tags{{"h", ch}, {"title", "RFC"}}, "forum post")
	ba.accept(post)
	comment := signed(t, member, 45003, nostr.Tags{{"h", ch}, {"e", post.ID, "", "reply"}}, "a comment")
	bm.accept(comment)
	vote := signed(t, member, 45002, nostr.Tags{{"h", ch}, {"e", post.ID}}, "+")
	bm.accept(vote)
	if a := bm.submit(signed(t, member, 45002, nostr.Tags{{"e", post.ID}}, "-")); !strings.HasPrefix(a.Message, "duplicate:") {
		t.Errorf("a second vote on one post: %+v, want duplicate:", a)
	}
	if a := bb.submit(signed(t, bob, 45002, nostr.Tags{{"e", post.ID}}, "+")); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
		t.Errorf("an outsider's vote: %+v, want invalid: (not stored)", a)
	}
	if a := bm.submit(signed(t, member, 45003, nostr.Tags{{"h", ch}, {"e", post.ID}}, "no marker")); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
		t.Errorf("a comment without a reply marker: %+v, want invalid:", a)
	}
	win := bm.query(map[string]any{"kinds": []int{45001, 45003, 45002}, "#h": []string{ch}, "top_level": true, "include_aux": true, "include_summaries": true})
	var rows []string
	var aux, sum bool
	for _, ev := range win {
		switch ev.Kind {
		case 45001, 45003:
			rows = append(rows, ev.ID)
		case 45002:
			aux = aux || ev.ID == vote.ID
		case 39005:
			sum = sum || (ev.Tags.GetD() == post.ID && replyCount(t, ev) == 1)
		}
	}
	if len(rows) != 1 || rows[0] != post.ID || !aux || !sum {
		t.Errorf("forum window: rows %v (want the post only), vote in aux %v, summary with one reply %v", rows, aux, sum)
	}
	if evs := bb.query(map[string]any{"kinds": []int{45001, 45002, 45003}}); len(evs) != 0 {
		t.Errorf("an outsider reads %d forum events", len(evs))
	}

	// Jobs, pins, diffs and canvases are channel content too.
	for _, kind := range []int{43001, 43004, 40004, 40005, 40006, 40007, 40008, 40100} {
		ev := signed(t, alice, kind, nostr.Tags{{"h", ch}}, "content")
		ba.accept(ev)
		if !hasID(bm.query(map[string]any{"ids": []string{ev.ID}}), ev.ID) || len(bb.query(map[string]any{"ids": []string{ev.ID}})) != 0 {
			t.Errorf("kind %d: a member reads it, an outsider does not", kind)
		}
		if a := ba.submit(signed(t, alice, kind, nil, "no channel")); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
			t.Errorf("kind %d without h: %+v, want invalid:", kind, a)
		}
	}
	ba.accept(signed(t, alice, 5, nostr.Tags{{"e", msg.ID}}, ""))
	if evs := bm.query(map[string]any{"ids": []string{msg.ID}}); len(evs) != 0 {
		t.Error("a deleted 40002 is still read")
	}

	// Typing indicators: live to members under the channel's rule.
	typing := signed(t, member, 20002, nostr.Tags{{"h", ch}}, "")
	if err := rm.Publish(ctxT(t), typing); err != nil {
		t.Fatal(err)
	}
	if wb.sees(rm, member, typing.ID) {
		t.Error("an outsider got a private channel's typing indicator")
	}
	wantPrefix(t, refused(t, rb, signed(t, bob, 20002, nostr.Tags{{"h", ch}}, "")), "restricted:")
}

func TestBuzzEngineKindsRefused(t *testing.T) {
	r := newRelay(t)
	alice, ra := loggedIn(t, r)
	ba := newBridge(t, r, alice)
	// 46001-46007 are the lifecycle events of a workflow engine that
	// publishes them, which this one does not (its runs and trace are rows:
	// docs/workflows.md); 46020 and the approvals are served (workflows_test.go).
	for kind, want := range map[int]string{46001: "workflow lifecycle", 48100: "huddle",
		30617: "git hosting", 1621: "git hosting"} {
		reason := refused(t, ra, signed(t, alice, kind, nil, ""))
		wantPrefix(t, reason, "restricted:")
		if !strings.Contains(reason, want) {
			t.Errorf("kind %d refused with %q, want it to name %q", kind, reason, want)
		}
		if a := ba.submit(signed(t, alice, kind, nil, "")); a.Accepted || !strings.Contains(a.Message, want) {
			t.Errorf("kind %d over /events: %+v", kind, a)
		}
	}
}

// NIP-RS read state over the bridge as a Buzz client loads it: the exact
// read_state_snapshot filter gets the whole set as one object, any other
// shape a 400, and NIP-11 advertises the extension with its caps.
func TestBuzzReadStateSnapshot(t *testing.T) {
	r := newRelay(t)
	alice, _ := loggedIn(t, r)
	bob, _ := loggedIn(t, r)
	ba, bb := newBridge(t, r, alice), newBridge(t, r, bob)
	slot := "read-state:" + strings.Repeat("a", 32)
	st := signed(t, alice, 30078, nostr.Tags{{"d", slot}, {"t", "read-state"}}, "nip44")
	ba.accept(st)
	bb.accept(signed(t, bob, 30078, nostr.Tags{{"d", slot}, {"t", "read-state"}}, "bob's"))

	body := []byte(`[{"kinds":[30078],"authors":["` + alice.Pub + `"],"read_state_snapshot":1}]`)
	status, out := ba.post("/query", body)
	var snap struct {
		Version   int           `json:"read_state_snapshot"`
		Complete  bool          `json:"complete"`
		Community string        `json:"community_id"`
		Pubkey    string        `json:"pubkey"`
		ID        string        `json:"snapshot_id"`
		Events    []nostr.Event `json:"events"`
	}
	if status != 200 || json.Unmarshal(out, &snap) != nil {
		t.Fatalf("snapshot: %d %s", status, out)
	}
	if !snap.Complete || snap.Version != 1 || snap.Pubkey != alice.Pub || len(snap.Events) != 1 || snap.Events[0].ID != st.ID || snap.ID == "" {
		t.Errorf("snapshot %s", out)
	}
	if status, out := bb.post("/query", body); status != 400 || !strings.Contains(string(out), "invalid:") || strings.Contains(string(out), `"complete"`) {
		t.Errorf("another key's snapshot: %d %s, want 400 invalid:", status, out)
	}
	mixed := []byte(`[{"kinds":[30078],"authors":["` + alice.Pub + `"],"read_state_snapshot":1},{"kinds":[0]}]`)
	if status, _ := ba.post("/query", mixed); status != 400 {
		t.Errorf("a snapshot mixed with another filter: %d, want 400", status)
	}
	// The ordinary query is unchanged.
	if evs := ba.query(map[string]any{"kinds": []int{30078}, "authors": []string{alice.Pub}}); len(evs) != 1 {
		t.Errorf("ordinary 30078 query: %d events", len(evs))
	}

	var info struct {
		RS *struct {
			Community string `json:"community_id"`
			MaxEvents int    `json:"max_events"`
			MaxBytes  int    `json:"max_event_array_bytes"`
			Version   int    `json:"version"`
		} `json:"read_state_snapshot"`
	}
	nip11(t, r, &info)
	if info.RS == nil {
		t.Fatalf("NIP-11 read_state_snapshot: %+v", info)
	}
	if info.RS.Community != snap.Community || info.RS.MaxEvents != 4096 || info.RS.MaxBytes <= 0 || info.RS.Version != 1 {
		t.Errorf("NIP-11 read_state_snapshot %+v, snapshot community %q", *info.RS, snap.Community)
	}
}

// NIP-CW's community row mode end to end: only an operator turns on
// thread_replies_in_channel (NIP-86), a member's window then has the
// replies as rows, and every 39006 says which mode it was served under.
func TestBuzzThreadRepliesInChannel(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	op, stranger := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "rows.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	h := onHost(t, r, "rows.test")
	alice := testkit.NewKey(t)
	ch := createChannelID()
	h.accept(alice, signed(t, alice, 9007, nostr.Tags{{"h", ch}, {"name", "rows"}, {"visibility", "open"}}, ""))
	root := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "root")
	h.accept(alice, root)
	reply := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"e", root.ID, "", "reply"}}, "reply")
	h.accept(alice, reply)

	mode := func() ([]string, bool) {
		t.Helper()
		var rows []string
		var on *bool
		for _, ev := range h.events(alice, map[string]any{"kinds": []int{9}, "#h": []string{ch}, "top_level": true, "limit": 10}) {
			switch ev.Kind {
			case 9:
				rows = append(rows, ev.ID)
			case 39006:
				var c struct {
					On *bool `json:"thread_replies_in_channel"`
				}
				_ = json.Unmarshal([]byte(ev.Content), &c)
				on = c.On
			}
		}
		if on == nil {
			t.Fatal("39006 without thread_replies_in_channel")
		}
		return rows, *on
	}
	if rows, on := mode(); on || len(rows) != 1 || rows[0] != root.ID {
		t.Fatalf("default: rows %v, mode %v", rows, on)
	}
	if st, m := h.rpc(stranger, "setthreadrepliesinchannel", true); st != http.StatusForbidden {
		t.Fatalf("a stranger sets the row mode: %d %v", st, m)
	}
	if st, m := h.rpc(op, "setthreadrepliesinchannel", "yes"); st == http.StatusOK && m["error"] == nil {
		t.Fatalf("a non-boolean row mode: %d %v", st, m)
	}
	if rows, on := mode(); on || len(rows) != 1 {
		t.Fatalf("after refused calls: rows %v, mode %v", rows, on)
	}
	if st, m := h.rpc(op, "setthreadrepliesinchannel", true); st != http.StatusOK || m["result"] != true {
		t.Fatalf("the operator sets the row mode: %d %v", st, m)
	}
	if rows, on := mode(); !on || len(rows) != 2 || !slices.Contains(rows, reply.ID) || !slices.Contains(rows, root.ID) {
		t.Fatalf("projection: rows %v, mode %v", rows, on)
	}
}

// rpc is a NIP-86 call by b's key to the relay's default community.
func (b *bridge) rpc(method string, params ...any) (int, map[string]any) {
	b.t.Helper()
	if params == nil {
		params = []any{}
	}
	body, _ := json.Marshal(map[string]any{"method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, b.r.HTTPURL+"/", strings.NewReader(string(body)))
	req.Header.Set("Authorization", b.token(b.url+"/", body))
	req.Header.Set("Content-Type", "application/nostr+json+rpc")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// Buzz's moderation as a Buzz client and its moderators use it: reports
// go to the operators' queue only; 9040-9044 from a moderator act on the
// bans NIP-86 lists (and NIP-86's bans are lifted by 9041), each with an
// audit row; a timed-out key's writes are blocked until the expiry.
func TestBuzzModeration(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	op := testkit.NewKey(t)
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	alice, ra := loggedIn(t, r)
	bob, _ := loggedIn(t, r)
	_, rc := loggedIn(t, r)
	bo, ba, bb := newBridge(t, r, op), newBridge(t, r, alice), newBridge(t, r, bob)
	wc := watch(t, rc)
	ch := newChannel(t, ba, "open")
	spam := signed(t, bob, 9, nostr.Tags{{"h", ch}}, "buy now")
	bb.accept(spam)

	// A report: accepted, queued, never served nor delivered.
	report := signed(t, alice, 1984, nostr.Tags{{"e", spam.ID, "spam"}, {"p", bob.Pub}}, "unsolicited ads")
	if err := ra.Publish(ctx, report); err != nil {
		t.Fatal(err)
	}
	if wc.sees(ra, alice, report.ID) {
		t.Error("a report reached a member live")
	}
	for _, b := range []*bridge{ba, bb, bo} {
		if evs := b.query(map[string]any{"kinds": []int{1984}}); len(evs) != 0 {
			t.Errorf("a report is readable: %d events", len(evs))
		}
		if n := b.count(map[string]any{"ids": []string{report.ID}}); n != 0 {
			t.Errorf("a report is counted: %d", n)
		}
	}
	if a := ba.submit(signed(t, alice, 1984, nostr.Tags{{"e", spam.ID}}, "")); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
		t.Errorf("a report without p: %+v", a)
	}
	st, m := bo.rpc("listeventsneedingmoderation")
	if st != http.StatusOK || !strings.Contains(js(m["result"]), spam.ID) || !strings.Contains(js(m["result"]), report.ID) {
		t.Fatalf("listeventsneedingmoderation: %d %v", st, m)
	}
	if st, _ := ba.rpc("listeventsneedingmoderation"); st != http.StatusForbidden {
		t.Errorf("a member lists the queue: %d", st)
	}

	commands := 0
	command := func(kind int, tags nostr.Tags) eventsAnswer {
		t.Helper()
		// A fresh content each time: the same command twice in one second
		// would be the same event, a duplicate:.
		a := bo.submit(signed(t, op, kind, tags, fmt.Sprint("command ", commands, " ", time.Now().UnixNano())))
		if a.Accepted && a.Message == "" {
			commands++
		}
		return a
	}
	post := func() eventsAnswer {
		return bb.submit(signed(t, bob, 9, nostr.Tags{{"h", ch}}, fmt.Sprint("hello ", time.Now().UnixNano())))
	}

	// Only moderators command.
	if a := ba.submit(signed(t, alice, 9040, nostr.Tags{{"p", bob.Pub}}, "")); a.Accepted || !strings.HasPrefix(a.Message, "restricted:") {
		t.Errorf("a member's ban: %+v", a)
	}
	// Timeout: blocked until the expiry, lifted by 9043.
	for name, tags := range map[string]nostr.Tags{
		"no expiration":   {{"p", bob.Pub}},
		"past expiration": {{"p", bob.Pub}, {"expiration", "1000"}},
		"no p":            {{"expiration", fmt.Sprint(time.Now().Unix() + 60)}},
	} {
		if a := command(9042, tags); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
			t.Errorf("timeout with %s: %+v", name, a)
		}
	}
	if a := command(9042, nostr.Tags{{"p", bob.Pub}, {"expiration", fmt.Sprint(time.Now().Unix() + 3600)}, {"reason", "cool off"}}); !a.Accepted {
		t.Fatalf("timeout: %+v", a)
	}
	if a := post(); a.Accepted || !strings.HasPrefix(a.Message, "blocked:") {
		t.Errorf("a timed-out key posts: %+v", a)
	}
	if evs := bb.query(map[string]any{"ids": []string{spam.ID}}); len(evs) != 1 {
		t.Error("a timed-out key can no longer read")
	}
	if a := command(9043, nostr.Tags{{"p", bob.Pub}}); !a.Accepted {
		t.Fatalf("untimeout: %+v", a)
	}
	if a := post(); !a.Accepted {
		t.Errorf("after the untimeout: %+v", a)
	}
	short := command(9042, nostr.Tags{{"p", bob.Pub}, {"expiration", fmt.Sprint(time.Now().Unix() + 2)}})
	if !short.Accepted {
		t.Fatalf("short timeout: %+v", short)
	}
	if a := post(); a.Accepted {
		t.Error("posted during a short timeout")
	}
	time.Sleep(3 * time.Second)
	if a := post(); !a.Accepted {
		t.Errorf("after the timeout expired: %+v", a)
	}

	// Ban: the ban NIP-86 lists; 9041 lifts it, and lifts NIP-86's too.
	ban := signed(t, op, 9040, nostr.Tags{{"p", bob.Pub}, {"reason", "spam"}}, "")
	if a := bo.submit(ban); !a.Accepted {
		t.Fatalf("ban: %+v", a)
	}
	commands++
	if a := bo.submit(ban); !strings.HasPrefix(a.Message, "duplicate:") {
		t.Errorf("the same ban again: %+v", a)
	}
	if st, m := bo.rpc("listbannedpubkeys"); st != http.StatusOK || !strings.Contains(js(m["result"]), bob.Pub) {
		t.Errorf("NIP-86 does not list the 9040 ban: %d %v", st, m)
	}
	if a := post(); a.Accepted || !strings.HasPrefix(a.Message, "blocked:") {
		t.Errorf("a banned key posts: %+v", a)
	}
	// Two seconds ahead: one could turn before the relay's check (an
	// expiration at or before its clock is refused, NIP-40).
	timeoutEnds := time.Now().Unix() + 2
	if a := command(9042, nostr.Tags{{"p", bob.Pub}, {"expiration", fmt.Sprint(timeoutEnds)}}); !a.Accepted {
		t.Fatalf("timeout over a ban: %+v", a)
	}
	time.Sleep(time.Until(time.Unix(timeoutEnds+1, 0))) // the timeout is over
	if a := post(); a.Accepted {
		t.Error("a timeout replaced a ban")
	}
	if a := command(9041, nostr.Tags{{"p", bob.Pub}}); !a.Accepted {
		t.Fatalf("unban: %+v", a)
	}
	if st, m := bo.rpc("listbannedpubkeys"); st != http.StatusOK || strings.Contains(js(m["result"]), bob.Pub) {
		t.Errorf("NIP-86 still lists bob after 9041: %v", m)
	}
	if st, _ := bo.rpc("banpubkey", bob.Pub, "via NIP-86"); st != http.StatusOK {
		t.Fatal("NIP-86 ban")
	}
	if a := post(); a.Accepted {
		t.Error("posted under a NIP-86 ban")
	}
	if a := command(9041, nostr.Tags{{"p", bob.Pub}}); !a.Accepted {
		t.Fatalf("unban of a NIP-86 ban: %+v", a)
	}
	if a := post(); !a.Accepted {
		t.Errorf("after 9041 lifted the NIP-86 ban: %+v", a)
	}

	// Resolve the report: it leaves the queue; a second resolve is refused.
	resolve := nostr.Tags{{"report", report.ID}, {"status", "resolved"}, {"action", "dismiss"}}
	if a := command(9044, nostr.Tags{{"report", report.ID}, {"status", "maybe"}}); a.Accepted {
		t.Error("a resolve with an unknown status")
	}
	if a := command(9044, resolve); !a.Accepted {
		t.Fatalf("resolve: %+v", a)
	}
	if st, m := bo.rpc("listeventsneedingmoderation"); st != http.StatusOK || strings.Contains(js(m["result"]), report.ID) {
		t.Errorf("the resolved report is still listed: %v", m)
	}
	if a := command(9044, resolve); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
		t.Errorf("resolving a resolved report: %+v", a)
	}

	// One audit row per accepted command; the commands are not events.
	acts, err := r.App.Store.ModerationActionsList(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != commands {
		t.Errorf("%d audit rows, %d accepted commands", len(acts), commands)
	}
	if evs := ba.query(map[string]any{"kinds": []int{9040, 9041, 9042, 9043, 9044}}); len(evs) != 0 {
		t.Errorf("moderation commands are readable: %d", len(evs))
	}
}

// Buzz's thread window over the bridge: the replies of one root paged with
// the 39007 bounds, and nothing for an outsider of a private channel.
func TestBuzzThreadWindow(t *testing.T) {
	r := newRelay(t)
	alice, _ := loggedIn(t, r)
	bob, _ := loggedIn(t, r)
	ba, bb := newBridge(t, r, alice), newBridge(t, r, bob)
	ch := newChannel(t, ba, "private")
	now := nostr.Now()
	root := signedAt(t, alice, now-100, 9, nostr.Tags{{"h", ch}}, "root")
	ba.accept(root)
	var replies []nostr.Event
	for i := range 3 {
		rp := signedAt(t, alice, now-90+nostr.Timestamp(i), 9, nostr.Tags{{"h", ch}, {"e", root.ID, "", "reply"}}, fmt.Sprint("reply ", i))
		ba.accept(rp)
		replies = append(replies, rp)
	}
	page := func(b *bridge, extra map[string]any) ([]string, map[string]any, int) {
		f := map[string]any{"thread_window": true, "#h": []string{ch}, "#e": []string{root.ID}, "kinds": []int{9}, "limit": 2}
		for k, v := range extra {
			f[k] = v
		}
		var rows []string
		var bounds map[string]any
		n := 0
		for _, ev := range b.query(f) {
			switch ev.Kind {
			case 9:
				rows = append(rows, ev.ID)
			case 39007:
				n++
				checkRelaySigned(t, r, ev)
				_ = json.Unmarshal([]byte(ev.Content), &bounds)
			}
		}
		return rows, bounds, n
	}
	rows, bounds, n := page(ba, nil)
	if n != 1 || len(rows) != 2 || rows[0] != replies[2].ID || rows[1] != replies[1].ID || bounds["has_more"] != true {
		t.Fatalf("page 1: rows %v bounds %v (%d)", rows, bounds, n)
	}
	next := bounds["next_cursor"].(map[string]any)
	rows, bounds, _ = page(ba, map[string]any{"until": next["created_at"], "before_id": next["id"]})
	if len(rows) != 1 || rows[0] != replies[0].ID || bounds["has_more"] != false || bounds["next_cursor"] != nil {
		t.Fatalf("page 2: rows %v bounds %v", rows, bounds)
	}
	if rows, _, n := page(bb, nil); len(rows) != 0 || n != 0 {
		t.Fatalf("outsider: %d rows, %d bounds", len(rows), n)
	}

	// The same window over a WebSocket REQ, as Buzz serves it there: the
	// same rows and the same 39007 (its d binds host, reader and request
	// alike on both doors), then EOSE, and nothing live afterwards.
	head := ofKind(ba.query(map[string]any{"thread_window": true, "#h": []string{ch}, "#e": []string{root.ID}, "kinds": []int{9}, "limit": 2}), 39007)
	if len(head) != 1 {
		t.Fatalf("%d bounds over /query", len(head))
	}
	rc := dialRaw(t, r)
	rc.send(`["REQ","warmup",{"kinds":[1],"limit":0}]`)
	challenge := str(t, rc.expect("AUTH")[1])
	rc.expect("CLOSED")
	rc.auth(r, alice, challenge)
	window := map[string]any{"thread_window": true, "#h": []string{ch}, "#e": []string{root.ID}, "kinds": []int{9}, "limit": 2}
	wsPage := func(sub string, filters ...any) (rows []string, bounds []nostr.Event) {
		t.Helper()
		rc.sendJSON(append([]any{"REQ", sub}, filters...))
		for {
			parts := rc.read()
			switch verb := str(t, parts[0]); verb {
			case "EOSE":
				return rows, bounds
			case "EVENT":
				var ev nostr.Event
				if err := json.Unmarshal(parts[2], &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Kind == 39007 {
					bounds = append(bounds, ev)
				} else {
					rows = append(rows, ev.ID)
				}
			default:
				t.Fatalf("REQ %s: %s", sub, joinRaw(parts))
			}
		}
	}
	wsRows, wsBounds := wsPage("tw", window)
	// The rows of the page, each once, before EOSE; a REQ's events are
	// posted concurrently, so their arrival order is not kept
	// (docs/compatibility.md).
	slices.Sort(wsRows)
	wantRows := []string{replies[2].ID, replies[1].ID}
	slices.Sort(wantRows)
	if !slices.Equal(wsRows, wantRows) || len(wsBounds) != 1 {
		t.Fatalf("REQ thread window: rows %v, %d bounds", wsRows, len(wsBounds))
	}
	checkRelaySigned(t, r, wsBounds[0])
	if got, want := wsBounds[0].Tags.GetD(), head[0].Tags.GetD(); got != want || !strings.HasPrefix(got, "tw:1:") {
		t.Errorf("39007 d over REQ %q, over /query %q", got, want)
	}
	late := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"e", root.ID, "", "reply"}}, "after EOSE")
	ba.accept(late)
	rc.send(`["REQ","probe",{"kinds":[1],"limit":0}]`)
	if parts := rc.expect("EOSE"); str(t, parts[1]) != "probe" {
		t.Fatalf("the thread window stayed live: %s", joinRaw(parts))
	}
	// Refused as on /query (CLOSED invalid:): a bad value, a thread window
	// mixed with another filter, a half cursor.
	for name, filters := range map[string][]any{
		"bad value":   {map[string]any{"thread_window": "yes", "#h": []string{ch}, "#e": []string{root.ID}}},
		"mixed":       {window, map[string]any{"kinds": []int{9}}},
		"half cursor": {map[string]any{"thread_window": true, "#h": []string{ch}, "#e": []string{root.ID}, "until": 5}},
	} {
		rc.sendJSON(append([]any{"REQ", "bad"}, filters...))
		if c := rc.expect("CLOSED"); !strings.HasPrefix(str(t, c[2]), "invalid:") {
			t.Errorf("%s: %s", name, joinRaw(c))
		}
	}
	// An outsider of the private channel: EOSE and nothing else.
	rb := dialRaw(t, r)
	rb.send(`["REQ","warmup",{"kinds":[1],"limit":0}]`)
	challenge = str(t, rb.expect("AUTH")[1])
	rb.expect("CLOSED")
	rb.auth(r, bob, challenge)
	rb.sendJSON([]any{"REQ", "tw", window})
	if parts := rb.expect("EOSE"); str(t, parts[1]) != "tw" {
		t.Fatalf("outsider: %s", joinRaw(parts))
	}
}

// Buzz's ephemeral kinds are delivered live and never stored: presence
// (20001) and device pairing (24134) outside any channel reach any
// subscriber; typing (20002) and huddle reactions (24810) in a private
// channel reach its members only, and an outsider may not send them there.
func TestBuzzEphemeralKinds(t *testing.T) {
	r := newRelay(t)
	alice, ra := loggedIn(t, r)
	bob, rb := loggedIn(t, r)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "private")
	member, _ := newMember(t, r, ba, ch)
	rm := dial(t, r)
	login(t, rm, member)
	wm, wb := watch(t, rm), watch(t, rb)
	for _, c := range []struct {
		kind    int
		tags    nostr.Tags
		outside bool // reaches a key outside the channel
	}{
		{20001, nil, true},
		{24134, nil, true},
		{20002, nostr.Tags{{"h", ch}}, false},
		{24810, nostr.Tags{{"h", ch}, {"e", unknownID(t, alice)}}, false},
	} {
		ev := signed(t, alice, c.kind, c.tags, "ephemeral")
		if err := ra.Publish(ctxT(t), ev); err != nil {
			t.Fatalf("kind %d: %v", c.kind, err)
		}
		if !wm.sees(ra, alice, ev.ID) {
			t.Errorf("kind %d: a member's live subscription missed it", c.kind)
		}
		if got := wb.sees(ra, alice, ev.ID); got != c.outside {
			t.Errorf("kind %d: an outsider got it live: %v, want %v", c.kind, got, c.outside)
		}
		if evs := ba.query(map[string]any{"ids": []string{ev.ID}}); len(evs) != 0 {
			t.Errorf("kind %d was stored", c.kind)
		}
		if n := ba.count(map[string]any{"kinds": []int{c.kind}}); n != 0 {
			t.Errorf("kind %d counts %d stored", c.kind, n)
		}
		if !c.outside {
			wantPrefix(t, refused(t, rb, signed(t, bob, c.kind, c.tags, "")), "restricted:")
		}
	}
}

// Deletion of each gated read model by its author: the event is gone for
// every reader it was readable by, and the deletion names it to no one
// else (user-owned state and shared personas: anyone could read them, so
// their deletions are ordinary; a p-gated metric: only the p read it).
func TestBuzzGatedDeletions(t *testing.T) {
	r := newRelay(t)
	alice, _ := loggedIn(t, r)
	bob, rb := loggedIn(t, r)
	ba, bb := newBridge(t, r, alice), newBridge(t, r, bob)
	for _, c := range []struct {
		name string
		kind int
		tags nostr.Tags
	}{
		{"user-owned read state", 30078, nostr.Tags{{"d", "read-state:x"}, {"t", "read-state"}}},
		{"shared persona", 30175, nostr.Tags{{"d", "p"}, {"shared", "true"}}},
		{"p-gated metric", 44200, nostr.Tags{{"p", bob.Pub}}},
	} {
		ev := signed(t, alice, c.kind, c.tags, "v1")
		ba.accept(ev)
		wantReadable(t, c.name+": bob before the deletion", readable(t, rb, bb, ev), true)
		ba.accept(signed(t, alice, 5, nostr.Tags{{"e", ev.ID}}, ""))
		wantReadable(t, c.name+": bob after the deletion", readable(t, rb, bb, ev), false)
		if c.kind == 44200 {
			// The metric's author never read it; the deletion by the author is
			// not readable by a third key either.
			carol, _ := loggedIn(t, r)
			bc := newBridge(t, r, carol)
			if evs := bc.query(map[string]any{"kinds": []int{5}, "#e": []string{ev.ID}}); len(evs) != 0 {
				t.Errorf("%s: a third key reads the deletion naming it", c.name)
			}
		}
	}
}

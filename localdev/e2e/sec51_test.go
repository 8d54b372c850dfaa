package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Issue 51, the status page: GET /healthz, with or without deep=1, tells
// anyone without an operator's token only that the relay is up (the same
// body, 30 callers at once alike); the figures go to an operator of the
// community at the host, NIP-98 signed, and are that community's alone
// (another community's newer write is not its last_write, and the
// deployment's community count is gone). A stranger's token is 403, a
// token for another URL 401, another community's operator 403.
func TestHealthzOperatorOnly(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	opA, opB, stranger, alice := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, r.App.Store, "default", opA.Pub); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory,
		community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees", Operators: []string{opB.Pub}}); err != nil {
		t.Fatal(err)
	}
	a, b := onHost(t, r, "a.test"), onHost(t, r, "b.test")
	evB := signed(t, alice, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "b"}, {"visibility", "open"}}, "")
	b.accept(alice, evB)
	// A's write is later than B's: B's last_write must not show it.
	time.Sleep(1100 * time.Millisecond)
	evA := signed(t, alice, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "a"}, {"visibility", "open"}}, "")
	a.accept(alice, evA)

	const up = `{"ok":true}`
	for _, h := range []*hosted{a, b} {
		for _, path := range []string{"/healthz", "/healthz?deep=1", "/healthz?deep=true"} {
			if st, body := h.do(nil, http.MethodGet, path, "", "", nil); st != 200 || strings.TrimSpace(string(body)) != up {
				t.Errorf("anonymous %s%s: %d %s, want up only", h.host, path, st, body)
			}
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, body := a.do(nil, http.MethodGet, "/healthz?deep=1", "", "", nil)
			if st != 200 || strings.TrimSpace(string(body)) != up {
				mu.Lock()
				bad = append(bad, string(body))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("30 anonymous deep checks at once: %d answered more than up: %q", len(bad), bad[0])
	}

	wantErr := func(h *hosted, u *user, tokenBase string, status int, prefix string) {
		t.Helper()
		st, body := h.do(u, http.MethodGet, "/healthz?deep=1", "", tokenBase, nil)
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		if st != status || !strings.HasPrefix(e.Error, prefix) || strings.Contains(string(body), "last_write") {
			t.Errorf("%s deep check: %d %s, want %d %s", h.host, st, body, status, prefix)
		}
	}
	wantErr(a, &stranger, "", http.StatusForbidden, "restricted:")
	wantErr(a, &opB, "", http.StatusForbidden, "restricted:")             // another community's operator
	wantErr(b, &opA, "", http.StatusForbidden, "restricted:")             // and the other way
	wantErr(a, &opA, b.base(), http.StatusUnauthorized, "auth-required:") // a token for another host

	figures := func(h *hosted, u user) map[string]json.RawMessage {
		t.Helper()
		st, body := h.do(&u, http.MethodGet, "/healthz?deep=1", "", "", nil)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); st != 200 || err != nil {
			t.Fatalf("%s operator's deep check: %d %s", h.host, st, body)
		}
		for _, k := range []string{"ok", "database", "last_write", "open_connections", "media_bytes", "open_reports"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s operator's deep check lacks %s: %s", h.host, k, body)
			}
		}
		if _, ok := m["communities"]; ok {
			t.Errorf("%s deep check tells the deployment's community count: %s", h.host, body)
		}
		return m
	}
	lastWrite := func(m map[string]json.RawMessage) int64 {
		var n int64
		_ = json.Unmarshal(m["last_write"], &n)
		return n
	}
	fa, fb := figures(a, opA), figures(b, opB)
	if lastWrite(fb) >= int64(evA.CreatedAt) || lastWrite(fb) < int64(evB.CreatedAt) {
		t.Fatalf("community B's last_write %d: B wrote at %d, A (later) at %d", lastWrite(fb), evB.CreatedAt, evA.CreatedAt)
	}
	if lastWrite(fa) < int64(evA.CreatedAt) {
		t.Fatalf("community A's last_write %d, its write at %d", lastWrite(fa), evA.CreatedAt)
	}
}

// Issue 51, NIP-62: a request to vanish names this relay by host and
// port (ws://127.0.0.1:1 is not a relay on another port, whatever the
// loopback spelling; a scheme's default port counts as written), on
// either door; and in a community that enforces NIP-43 membership a
// non-member's 62 is refused and stores nothing, while a member's goes
// through.
func TestVanishPortAndMembership(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	alice, rl := loggedIn(t, r)
	publish(t, rl, alice, 1, nil, "alice's note")
	port := r.WSURL[strings.LastIndex(r.WSURL, ":")+1:]
	for _, other := range []string{"ws://127.0.0.1:1", "ws://localhost:1", "ws://127.0.0.1", "wss://127.0.0.1:" + port + "0"} {
		wantPrefix(t, refused(t, rl, signed(t, alice, 62, nostr.Tags{{"relay", other}}, "")), "invalid:")
		if a := newBridge(t, r, alice).submit(signed(t, alice, 62, nostr.Tags{{"relay", other}}, "")); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
			t.Fatalf("POST /events took a request to vanish naming %s: %+v", other, a)
		}
	}
	b := newBridge(t, r, alice)
	if got := b.query(map[string]any{"authors": []string{alice.Pub}}); len(got) != 1 {
		t.Fatalf("a request naming another port deleted alice's note: %d left", len(got))
	}

	// A closed community: a stranger's 62 (with content to be served) is
	// refused at the door on both doors and stores nothing.
	op := testkit.NewKey(t)
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	bo := newBridge(t, r, op)
	if st, m := bo.rpc("setrelaymembership", true); st != http.StatusOK {
		t.Fatalf("enforcement on: %d %v", st, m)
	}
	r.ForgetCommunities()
	stranger, srl := loggedIn(t, r)
	all := nostr.Tags{{"relay", "ALL_RELAYS"}}
	wantPrefix(t, refused(t, srl, signed(t, stranger, 62, all, "arbitrary content in a closed community")), "restricted:")
	if a := newBridge(t, r, stranger).submit(signed(t, stranger, 62, all, "over HTTP")); a.Accepted || !strings.HasPrefix(a.Message, "restricted:") {
		t.Fatalf("POST /events took a non-member's 62: %+v", a)
	}
	if st, m := bo.rpc("setrelaymembership", false); st != http.StatusOK {
		t.Fatalf("enforcement off: %d %v", st, m)
	}
	r.ForgetCommunities()
	if got := b.query(map[string]any{"kinds": []int{62}, "authors": []string{stranger.Pub}}); len(got) != 0 {
		t.Fatalf("a non-member's 62 was stored: %d", len(got))
	}
	// Named by this relay's own port (any loopback spelling), alice's goes.
	if a := b.submit(signed(t, alice, 62, nostr.Tags{{"relay", "ws://localhost:" + port}}, "")); !a.Accepted {
		t.Fatalf("alice's request to vanish naming this relay: %+v", a)
	}
}

// from is h with its requests sent from source address ip (a loopback
// address other than 127.0.0.1: another client as the relay sees it).
func (h *hosted) from(ip string) *hosted {
	addr := strings.TrimPrefix(h.r.HTTPURL, "http://")
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return d.DialContext(ctx, network, addr)
	}
	return &hosted{t: h.t, r: h.r, host: h.host, hc: &http.Client{Transport: &http.Transport{DialContext: dial}}}
}

// Issue 51, invite claims: 60 fresh keys each claiming 10 made-up codes
// (from 10 addresses, 60 claims each, within each address's budget) no
// longer use up the community's claim budget: a made-up code costs its
// caller, so a real newcomer's first claim still joins. A key past its
// own budget, and an address past its own, are refused rate-limited:
// without costing anyone else. A banned key is refused at every claim
// door (POST /api/invites/claim, a 28934 over WebSocket and over POST
// /events) with the guard's one ban answer, a valid code in hand.
func TestInviteClaimBudgetStrangers(t *testing.T) {
	c := newInvitesCommunity(t, Options{})
	st, m := c.mint(t, c.adm, `{"ttl_secs":3600,"max_uses":5}`)
	if st != http.StatusOK || m.Code == "" {
		t.Fatalf("mint: %d %+v", st, m)
	}
	madeUp := func() string { return strings.ToLower(testkit.NewKey(t).Pub[:32]) }

	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	for a := 0; a < 10; a++ {
		h := c.h.from(fmt.Sprintf("127.0.0.%d", a+2))
		for k := 0; k < 6; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := testkit.NewKey(t)
				for i := 0; i < 10; i++ {
					st, a := claimOn(t, h, key, madeUp(), "")
					mu.Lock()
					answers[fmt.Sprint(st, " ", a.Error)]++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(answers) != 1 || answers["403 "+invite.ErrInvalid.Error()] != 600 {
		t.Fatalf("600 made-up claims from 60 keys on 10 addresses: %v, want every one 403 %s", answers, invite.ErrInvalid)
	}
	newcomer := testkit.NewKey(t)
	if st, a := claimOn(t, c.h, newcomer, m.Code, ""); st != http.StatusOK || a.Status != "joined" {
		t.Fatalf("the real newcomer's claim after the strangers': %d %+v", st, a)
	}

	// One key past its own budget, one address past its own: refused,
	// and the budgets of others untouched. (Fixed one-minute windows: 21
	// claims of one key, 121 from one address, put 11 and 61 in one
	// window wherever a window ends.)
	limited := func(h *hosted, keys []user, n int, what string) {
		t.Helper()
		for i := 0; i < n; i++ {
			if st, a := claimOn(t, h, keys[i%len(keys)], madeUp(), ""); st == http.StatusTooManyRequests && strings.Contains(a.Error, what) {
				return
			} else if st != http.StatusForbidden && st != http.StatusTooManyRequests {
				t.Fatalf("claim %d %s: %d %+v", i, what, st, a)
			}
		}
		t.Fatalf("%d claims, none refused %s", n, what)
	}
	greedy := c.h.from("127.0.0.12")
	limited(greedy, []user{testkit.NewKey(t)}, 21, "by this key")
	var many []user
	for i := 0; i < 13; i++ {
		many = append(many, testkit.NewKey(t))
	}
	limited(c.h.from("127.0.0.13"), many, 121, "from this address")
	if st, a := claimOn(t, greedy, testkit.NewKey(t), m.Code, ""); st != http.StatusOK || a.Status != "joined" {
		t.Fatalf("another key from the greedy key's address: %d %+v", st, a)
	}

	// A banned key, a valid code in hand, at every claim door.
	banned := testkit.NewKey(t)
	if st, out := c.rpc(t, "banpubkey", banned.Pub, "spam"); st != http.StatusOK {
		t.Fatalf("banpubkey: %d %v", st, out)
	}
	st, a := claimOn(t, c.h, banned, m.Code, "")
	if st != http.StatusForbidden || !strings.HasPrefix(a.Error, "blocked:") {
		t.Fatalf("a banned key's POST /api/invites/claim: %d %+v", st, a)
	}
	join := signed(t, banned, 28934, nostr.Tags{{"-"}, {"claim", m.Code}}, "")
	if ans := c.h.submit(banned, join); ans.Accepted || ans.Message != a.Error {
		t.Fatalf("a banned key's 28934 over POST /events: %+v, want %q", ans, a.Error)
	}
	rc := authedOn(t, c.h, banned)
	rc.sendJSON([]any{"EVENT", signed(t, banned, 28934, nostr.Tags{{"-"}, {"claim", m.Code}}, "")})
	if ok := rc.expect("OK"); string(ok[2]) != "false" || str(t, ok[3]) != a.Error {
		t.Fatalf("a banned key's 28934 over WebSocket: %s, want %q", joinRaw(ok), a.Error)
	}
	if slices.Contains(c.members(t), banned.Pub+":member") {
		t.Fatal("a banned key joined")
	}
}

// Issue 51, existence oracles: every write path that names another event
// or group answers "does not exist" and "exists but is not yours" alike,
// over POST /events and over WebSocket, in Buzz's words where Buzz has
// them (block/buzz e2e_existence_oracle, e2e_author_only_deletion):
// deletions (kind 5 and 9005), reactions, edits, replies and reports
// naming a missing, deleted, private, author-only or other channel's
// event, or someone else's; a 9007 at the id of an existing DM and of a
// DM that does not exist. Positive controls show the legitimate writes
// still pass; 30 deletions at once answer alike.
func TestOneAnswerMissingOrNotYours(t *testing.T) {
	r := newRelay(t)
	author, arl := loggedIn(t, r)
	other, orl := loggedIn(t, r)
	bo, ba := newBridge(t, r, other), newBridge(t, r, author)
	open := createChannel(t, arl, author, "open")
	priv := createChannel(t, arl, author, "private")
	own := createChannel(t, orl, other, "open")
	live := publish(t, arl, author, 9, nostr.Tags{{"h", open}}, "live")
	gone := publish(t, arl, author, 9, nostr.Tags{{"h", open}}, "deleted")
	publish(t, arl, author, 5, nostr.Tags{{"e", gone.ID}}, "")
	hidden := publish(t, arl, author, 9, nostr.Tags{{"h", priv}}, "private")
	reminder := publish(t, arl, author, 30300, nostr.Tags{{"d", createChannelID()}, {"alt", "Encrypted reminder"}}, "nip44-ciphertext")
	notYours := publish(t, arl, author, 9, nostr.Tags{{"h", own}}, "the author's, in other's channel")
	missing := strings.Repeat("a", 64)

	// answer sends ev over both doors: the HTTP status and message, and
	// the WebSocket OK's message must agree.
	answer := func(ev nostr.Event) (int, string) {
		t.Helper()
		raw, _ := json.Marshal(ev)
		st, body := bo.post("/events", raw)
		var a struct {
			Accepted bool   `json:"accepted"`
			Message  string `json:"message"`
			Error    string `json:"error"`
		}
		_ = json.Unmarshal(body, &a)
		if a.Accepted {
			t.Fatalf("kind %d accepted over HTTP, want a refusal", ev.Kind)
		}
		msg := a.Message + a.Error
		if ws := refused(t, orl, ev); !strings.Contains(ws, msg) {
			t.Errorf("kind %d: WebSocket %q, HTTP %q", ev.Kind, ws, msg)
		}
		return st, msg
	}
	uniform := func(what, want string, cases map[string]nostr.Event) {
		t.Helper()
		status := 0
		for name, ev := range cases {
			st, msg := answer(ev)
			if msg != want {
				t.Errorf("%s, %s: %q, want %q", what, name, msg, want)
			}
			if status == 0 {
				status = st
			} else if st != status {
				t.Errorf("%s, %s: HTTP %d, others %d", what, name, st, status)
			}
		}
	}
	by := func(kind int, tags nostr.Tags, content string) nostr.Event {
		return signed(t, other, kind, tags, content)
	}

	uniform("kind 5", "invalid: deletion target not found or not deletable by you", map[string]nostr.Event{
		"missing": by(5, nostr.Tags{{"e", missing}}, ""), "live": by(5, nostr.Tags{{"e", live.ID}}, ""),
		"deleted": by(5, nostr.Tags{{"e", gone.ID}}, ""), "private channel": by(5, nostr.Tags{{"e", hidden.ID}}, ""),
		"author-only": by(5, nostr.Tags{{"e", reminder.ID}}, ""), "not yours, in my channel": by(5, nostr.Tags{{"e", notYours.ID}}, ""),
		"another's address": by(5, nostr.Tags{{"a", "30300:" + author.Pub + ":x"}}, ""),
	})
	uniform("9005", "invalid: deletion target not found or not deletable by you", map[string]nostr.Event{
		"missing": by(9005, nostr.Tags{{"h", own}, {"e", missing}}, ""), "other channel": by(9005, nostr.Tags{{"h", own}, {"e", live.ID}}, ""),
		"private channel": by(9005, nostr.Tags{{"h", priv}, {"e", hidden.ID}}, ""), "no channel": by(9005, nostr.Tags{{"h", own}, {"e", reminder.ID}}, ""),
		"not yours, in its channel": by(9005, nostr.Tags{{"h", open}, {"e", live.ID}}, ""),
	})
	uniform("reaction", "invalid: reaction target event not found", map[string]nostr.Event{
		"missing": by(7, nostr.Tags{{"e", missing}}, "+"), "deleted": by(7, nostr.Tags{{"e", gone.ID}}, "+"),
		"private channel": by(7, nostr.Tags{{"e", hidden.ID}}, "+"), "author-only": by(7, nostr.Tags{{"e", reminder.ID}}, "+"),
		"other channel than its h": by(7, nostr.Tags{{"e", live.ID}, {"h", own}}, "+"),
	})
	uniform("edit", "invalid: edit target not found or not editable by you", map[string]nostr.Event{
		"missing": by(40003, nostr.Tags{{"e", missing}, {"h", own}}, "x"), "deleted": by(40003, nostr.Tags{{"e", gone.ID}, {"h", own}}, "x"),
		"other channel": by(40003, nostr.Tags{{"e", live.ID}, {"h", own}}, "x"), "private channel": by(40003, nostr.Tags{{"e", hidden.ID}, {"h", own}}, "x"),
		"author-only": by(40003, nostr.Tags{{"e", reminder.ID}, {"h", own}}, "x"), "not yours": by(40003, nostr.Tags{{"e", notYours.ID}, {"h", own}}, "x"),
	})
	reply := func(parent string) nostr.Event {
		return by(9, nostr.Tags{{"h", own}, {"e", parent, "", "reply"}}, "reply")
	}
	uniform("reply", "invalid: reply parent not found", map[string]nostr.Event{
		"missing": reply(missing), "deleted": reply(gone.ID), "other channel": reply(live.ID),
		"private channel": reply(hidden.ID), "author-only": reply(reminder.ID),
	})
	report := func(target string) nostr.Event {
		return by(1984, nostr.Tags{{"e", target, "spam"}, {"p", author.Pub}}, "")
	}
	uniform("report", "invalid: report target event not found", map[string]nostr.Event{
		"missing": report(missing), "deleted": report(gone.ID), "private channel": report(hidden.ID), "author-only": report(reminder.ID),
	})

	// A 9007 at a DM's id: the same answer whether the DM exists or not.
	bob, carol := testkit.NewKey(t), testkit.NewKey(t)
	publish(t, arl, author, 41010, nostr.Tags{{"p", bob.Pub}}, "")
	dmOf := func(a, b string) string {
		keys, err := nip29.DMSet(map[string]bool{a: true, b: true})
		if err != nil {
			t.Fatal(err)
		}
		return nip29.DMChannelID(keys)
	}
	existing, absent := dmOf(author.Pub, bob.Pub), dmOf(carol.Pub, bob.Pub)
	create := func(id string) nostr.Event {
		return by(9007, nostr.Tags{{"h", id}, {"name", "DM"}, {"visibility", "open"}}, "")
	}
	st1, m1 := answer(create(existing))
	st2, m2 := answer(create(absent))
	if st1 != st2 || strings.ReplaceAll(m1, existing, "<id>") != strings.ReplaceAll(m2, absent, "<id>") {
		t.Errorf("9007 at an existing DM: %d %q; at an absent one: %d %q", st1, m1, st2, m2)
	}

	// 30 deletions at once, half naming a live event, half a missing one.
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	for i := 0; i < 30; i++ {
		target := missing
		if i%2 == 0 {
			target = live.ID
		}
		ev := signed(t, other, 5, nostr.Tags{{"e", target}}, fmt.Sprint(i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw, _ := json.Marshal(ev)
			st, body := bo.post("/events", raw)
			mu.Lock()
			seen[fmt.Sprint(st, " ", strings.ReplaceAll(string(body), ev.ID, "<id>"))]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(seen) != 1 {
		t.Errorf("30 deletions at once answered %d ways: %v", len(seen), seen)
	}

	// Positive controls: the legitimate writes pass.
	for _, ev := range []nostr.Event{
		signed(t, author, 40003, nostr.Tags{{"e", live.ID}, {"h", open}}, "edited"),
		signed(t, author, 7, nostr.Tags{{"e", reminder.ID}}, "+"),
		signed(t, author, 9, nostr.Tags{{"h", open}, {"e", live.ID, "", "reply"}}, "a reply"),
		signed(t, other, 1984, nostr.Tags{{"e", live.ID, "spam"}, {"p", author.Pub}}, ""),
		signed(t, author, 5, nostr.Tags{{"e", notYours.ID}}, ""),
	} {
		b := ba
		if ev.PubKey == other.Pub {
			b = bo
		}
		if a := b.submit(ev); !a.Accepted {
			t.Errorf("kind %d, the legitimate write: %+v", ev.Kind, a)
		}
	}
}

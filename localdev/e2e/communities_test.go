package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// hosted is a client of one community of a shared relay: every request
// goes to the relay's loopback port with Host set to host, as DNS records
// pointing two names at one deployment would make it.
type hosted struct {
	t    *testing.T
	r    *Relay
	host string // a.test:port
	hc   *http.Client
}

func onHost(t *testing.T, r *Relay, name string) *hosted {
	port := r.HTTPURL[strings.LastIndex(r.HTTPURL, ":"):]
	addr := strings.TrimPrefix(r.HTTPURL, "http://")
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &hosted{t: t, r: r, host: name + port, hc: &http.Client{Transport: &http.Transport{DialContext: dial}}}
}

func (h *hosted) base() string { return "http://" + h.host }

// do sends method path with body as u (no token when u is nil), the token
// naming tokenBase+path ("" = this host).
func (h *hosted) do(u *user, method, path, contentType, tokenBase string, body []byte) (int, []byte) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.base()+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if method == http.MethodGet {
		req.Header.Set("Accept", "application/nostr+json")
	}
	if u != nil {
		if tokenBase == "" {
			tokenBase = h.base()
		}
		// Every token binds the body, an empty one too.
		req.Header.Set("Authorization", u.Token(h.t, method, tokenBase+path, append([]byte{}, body...), time.Now()))
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (h *hosted) info() (int, relayinfo.Document) {
	h.t.Helper()
	status, out := h.do(nil, http.MethodGet, "/", "", "", nil)
	var d relayinfo.Document
	if status == http.StatusOK {
		if err := json.Unmarshal(out, &d); err != nil {
			h.t.Fatalf("NIP-11 %s: %s", h.host, out)
		}
	}
	return status, d
}

func (h *hosted) submit(u user, ev nostr.Event) eventsAnswer {
	h.t.Helper()
	raw, _ := json.Marshal(ev)
	status, out := h.do(&u, http.MethodPost, "/events", "application/json", "", raw)
	var a eventsAnswer
	if status == http.StatusOK {
		_ = json.Unmarshal(out, &a)
		return a
	}
	var e struct{ Error string }
	_ = json.Unmarshal(out, &e)
	return eventsAnswer{EventID: ev.ID, Message: e.Error}
}

func (h *hosted) accept(u user, ev nostr.Event) {
	h.t.Helper()
	if a := h.submit(u, ev); !a.Accepted {
		h.t.Fatalf("%s: kind %d refused: %s", h.host, ev.Kind, a.Message)
	}
}

func (h *hosted) query(u user, path string, filters ...map[string]any) []byte {
	h.t.Helper()
	body, _ := json.Marshal(filters)
	status, out := h.do(&u, http.MethodPost, path, "application/json", "", body)
	if status != http.StatusOK {
		h.t.Fatalf("%s %s %s: %d %s", h.host, path, body, status, out)
	}
	return out
}

func (h *hosted) events(u user, filters ...map[string]any) []nostr.Event {
	h.t.Helper()
	var evs []nostr.Event
	if err := json.Unmarshal(h.query(u, "/query", filters...), &evs); err != nil {
		h.t.Fatal(err)
	}
	return evs
}

func (h *hosted) count(u user, filters ...map[string]any) int {
	h.t.Helper()
	var c struct{ Count int }
	_ = json.Unmarshal(h.query(u, "/count", filters...), &c)
	return c.Count
}

// rpc is a NIP-86 call as u; it answers the status and the decoded body.
func (h *hosted) rpc(u user, method string, params ...any) (int, map[string]any) {
	h.t.Helper()
	if params == nil {
		params = []any{}
	}
	body, _ := json.Marshal(map[string]any{"method": method, "params": params})
	status, out := h.do(&u, http.MethodPost, "/", "application/nostr+json+rpc", "", body)
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	return status, m
}

func (h *hosted) dial() (*rawConn, error) {
	h.t.Helper()
	c, _, err := websocket.Dial(ctxT(h.t), "ws://"+h.host, &websocket.DialOptions{HTTPClient: h.hc})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	h.t.Cleanup(func() { c.CloseNow() })
	return &rawConn{t: h.t, c: c}, nil
}

// socketRefused reports whether the host serves no WebSocket: the upgrade
// is refused where $connect reads the database (the handlers in one
// process). Behind the shipped ws-connect, which never touches the
// database (BUZZ_LAMBDA=processes runs it), the upgrade succeeds, the push
// function's challenge arrives as on any connection (it is derived from
// the connection id and says nothing of the host), and the first message
// is refused: a REQ answered CLOSED, nothing more.
func (h *hosted) socketRefused(r *Relay) bool {
	h.t.Helper()
	rc, err := h.dial()
	if err != nil {
		return true
	}
	if r.Functions == nil {
		return false
	}
	if greeting := rc.read(); str(h.t, greeting[0]) != "AUTH" {
		h.t.Logf("%s: first frame %s, want the pushed challenge", h.host, joinRaw(greeting))
		return false
	}
	rc.send(`["REQ","probe",{"limit":1}]`)
	parts := rc.read()
	if str(h.t, parts[0]) != "CLOSED" || len(parts) < 3 || str(h.t, parts[1]) != "probe" {
		h.t.Logf("%s: first message answered %s, want CLOSED", h.host, joinRaw(parts))
		return false
	}
	if _, more := rc.maybeRead(300 * time.Millisecond); more {
		h.t.Logf("%s: more than CLOSED after the first message", h.host)
		return false
	}
	return true
}

// authed opens a socket authenticated as u (the relay tag naming relayURL).
func (h *hosted) authed(u user, relayURL string) (*rawConn, bool) {
	h.t.Helper()
	rc, err := h.dial()
	if err != nil {
		h.t.Fatal(err)
	}
	rc.send(`["REQ","warmup",{"limit":0}]`)
	challenge := str(h.t, rc.expect("AUTH")[1])
	rc.expect("CLOSED")
	ev := signed(h.t, u, 22242, nostr.Tags{{"relay", relayURL}, {"challenge", challenge}}, "")
	rc.sendJSON([]any{"AUTH", ev})
	ok := rc.expect("OK")
	return rc, string(ok[2]) == "true"
}

// reqIDs runs one REQ on rc and returns the ids before EOSE.
func reqIDs(t *testing.T, rc *rawConn, sub string, filter map[string]any) []string {
	t.Helper()
	rc.sendJSON([]any{"REQ", sub, filter})
	var ids []string
	for {
		parts := rc.read()
		switch str(t, parts[0]) {
		case "EVENT":
			var ev nostr.Event
			_ = json.Unmarshal(parts[2], &ev)
			ids = append(ids, ev.ID)
		case "EOSE":
			return ids
		case "CLOSED":
			t.Fatalf("REQ %v closed: %s", filter, joinRaw(parts))
		}
	}
}

// Two communities on one relay, each on its own hostname: their own NIP-11
// and relay key, no read path crossing over (even for known ids), NIP-98
// and NIP-42 bound to the hostname, NIP-86 management by each community's
// operators only, and a ban in one that leaves the other alone.
func TestCommunitiesIsolated(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	db := r.App.Store
	opA, opB, alice, bob, carol := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, db, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, db, "default", opA.Pub); err != nil {
		t.Fatal(err)
	}
	pubB, err := community.Create(ctx, db, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees", About: "a hive", Operators: []string{opB.Pub}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := onHost(t, r, "a.test"), onHost(t, r, "b.test")

	// NIP-11 per hostname; unknown hosts get 404, not the default's data.
	pubA := r.App.Signer.PublicKey()
	if st, d := a.info(); st != http.StatusOK || d.Self != pubA {
		t.Fatalf("a.test NIP-11: %d %+v", st, d)
	}
	if st, d := b.info(); st != http.StatusOK || d.Self != pubB || d.Name != "Bees" || d.Description != "a hive" || pubB == pubA {
		t.Fatalf("b.test NIP-11: %d %+v", st, d)
	}
	for _, host := range []string{"c.test", "127.0.0.1"} {
		u := onHost(t, r, host)
		if st, _ := u.info(); st != http.StatusNotFound {
			t.Errorf("%s NIP-11: %d, want 404", host, st)
		}
		if st, out := u.do(&alice, http.MethodPost, "/query", "application/json", "", []byte(`[{"limit":1}]`)); st != http.StatusNotFound {
			t.Errorf("%s /query: %d %s, want 404", host, st, out)
		}
		if !u.socketRefused(r) {
			t.Errorf("%s: WebSocket served, want refused", host)
		}
	}

	// The same channel id in both communities; state signed by each key.
	ch := createChannelID()
	a.accept(alice, signed(t, alice, 9007, nostr.Tags{{"h", ch}, {"name", "alpha"}, {"visibility", "open"}}, ""))
	b.accept(bob, signed(t, bob, 9007, nostr.Tags{{"h", ch}, {"name", "beta"}, {"visibility", "open"}}, ""))
	for _, c := range []struct {
		h   *hosted
		u   user
		pub string
	}{{a, alice, pubA}, {b, bob, pubB}} {
		for _, kind := range []int{39000, 39001, 39002} {
			evs := c.h.events(c.u, map[string]any{"kinds": []int{kind}, "#d": []string{ch}})
			if len(evs) != 1 || evs[0].PubKey != c.pub {
				t.Fatalf("%s kind %d: %d events, want one signed by %s", c.h.host, kind, len(evs), c.pub[:8])
			}
			if ok, _ := evs[0].CheckSignature(); !ok {
				t.Fatalf("%s kind %d: bad signature", c.h.host, kind)
			}
		}
	}
	rootA := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "zebrafish alpha secret")
	a.accept(alice, rootA)
	replyA := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"e", rootA.ID, "", "reply"}}, "zebrafish reply")
	a.accept(alice, replyA)
	rootB := signed(t, bob, 9, nostr.Tags{{"h", ch}}, "beta")
	b.accept(bob, rootB)

	// Window (39005 summaries and 39006 bounds signed by each community).
	for _, c := range []struct {
		h        *hosted
		u        user
		pub, own string
	}{{a, alice, pubA, rootA.ID}, {b, bob, pubB, rootB.ID}} {
		evs := c.h.events(c.u, windowRequest(ch, 50, nil, nil))
		var rows int
		for _, ev := range evs {
			switch ev.Kind {
			case 9:
				rows++
				if ev.ID != c.own {
					t.Fatalf("%s window serves %s, not its own root", c.h.host, ev.ID[:8])
				}
			case 39005, 39006:
				if ev.PubKey != c.pub {
					t.Fatalf("%s window kind %d signed by %s, want %s", c.h.host, ev.Kind, ev.PubKey[:8], c.pub[:8])
				}
			}
		}
		if rows != 1 {
			t.Fatalf("%s window: %d rows, want 1", c.h.host, rows)
		}
	}
	// Nothing of A through B: ids, thread, channel, search, COUNT.
	for name, f := range map[string]map[string]any{
		"ids":     {"ids": []string{rootA.ID, replyA.ID}},
		"thread":  {"#e": []string{rootA.ID}, "depth_limit": 10, "include_aux": true},
		"channel": {"kinds": []int{9}, "#h": []string{ch}},
		"search":  {"search": "zebrafish"},
		"author":  {"authors": []string{alice.Pub}},
	} {
		for _, ev := range b.events(bob, f) {
			if ev.ID == rootA.ID || ev.ID == replyA.ID || ev.PubKey == alice.Pub || ev.PubKey == pubA {
				t.Errorf("b.test %s read served a.test's %s (kind %d)", name, ev.ID[:8], ev.Kind)
			}
		}
		if name != "search" && name != "thread" {
			want := 0
			if name == "channel" {
				want = 1
			}
			if n := b.count(bob, f); n != want {
				t.Errorf("b.test COUNT %s: %d, want %d", name, n, want)
			}
		}
	}
	if n := a.count(alice, map[string]any{"ids": []string{rootA.ID}}); n != 1 {
		t.Fatalf("a.test COUNT of its own event: %d", n)
	}

	// WebSocket: REQ by known id and live delivery stay in the community.
	rb, ok := b.authed(bob, "ws://"+b.host)
	if !ok {
		t.Fatal("AUTH on b.test naming b.test refused")
	}
	if ids := reqIDs(t, rb, "known", map[string]any{"ids": []string{rootA.ID, rootB.ID}}); len(ids) != 1 || ids[0] != rootB.ID {
		t.Fatalf("b.test REQ of known ids: %v", ids)
	}
	rb.sendJSON([]any{"COUNT", "c", map[string]any{"ids": []string{rootA.ID}}})
	if cnt := rb.expect("COUNT"); !strings.Contains(string(cnt[2]), `"count":0`) {
		t.Fatalf("b.test WebSocket COUNT of a.test's id: %s", joinRaw(cnt))
	}
	if ids := reqIDs(t, rb, "live", map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 0}); len(ids) != 0 {
		t.Fatalf("live REQ stored part: %v", ids)
	}
	liveA := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "only for a")
	a.accept(alice, liveA)
	liveB := signed(t, bob, 9, nostr.Tags{{"h", ch}}, "only for b")
	b.accept(bob, liveB)
	for {
		parts := rb.read()
		if str(t, parts[0]) != "EVENT" {
			continue
		}
		var ev nostr.Event
		_ = json.Unmarshal(parts[2], &ev)
		if ev.ID == liveA.ID {
			t.Fatal("a.test's event was delivered live on b.test")
		}
		if ev.ID == liveB.ID {
			break
		}
	}

	// NIP-98 and NIP-42 are bound to the hostname.
	body := []byte(`[{"limit":1}]`)
	if st, _ := b.do(&bob, http.MethodPost, "/query", "application/json", a.base(), body); st != http.StatusUnauthorized {
		t.Fatalf("b.test with a token naming a.test: %d, want 401", st)
	}
	if _, ok := b.authed(bob, "ws://"+a.host); ok {
		t.Fatal("AUTH on b.test naming a.test accepted")
	}

	// NIP-86: each community's operators only.
	if st, m := b.rpc(opB, "supportedmethods"); st != http.StatusOK || !strings.Contains(js(m["result"]), "banpubkey") {
		t.Fatalf("supportedmethods: %d %v", st, m)
	}
	{ // NIP-86 tokens must bind the body (payload tag)
		ev := signed(t, opB, 27235, nostr.Tags{{"u", b.base() + "/"}, {"method", "POST"}}, "")
		raw, _ := json.Marshal(ev)
		req, _ := http.NewRequest(http.MethodPost, b.base()+"/", strings.NewReader(`{"method":"banpubkey","params":["`+carol.Pub+`"]}`))
		req.Header.Set("Content-Type", "application/nostr+json+rpc")
		req.Header.Set("Authorization", "Nostr "+base64.StdEncoding.EncodeToString(raw))
		resp, err := b.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("NIP-86 token without payload: %d, want 401", resp.StatusCode)
		}
	}
	for _, u := range []user{opA, bob} {
		if st, m := b.rpc(u, "banpubkey", carol.Pub); st != http.StatusForbidden || !strings.HasPrefix(js(m["error"]), `"restricted:`) {
			t.Fatalf("banpubkey on b.test by a non-operator: %d %v", st, m)
		}
	}
	if st, m := b.rpc(opB, "banpubkey", carol.Pub, "spam"); st != http.StatusOK || m["result"] != true {
		t.Fatalf("banpubkey: %d %v", st, m)
	}
	if st, m := b.rpc(opB, "listbannedpubkeys"); st != http.StatusOK || !strings.Contains(js(m["result"]), carol.Pub) {
		t.Fatalf("listbannedpubkeys: %d %v", st, m)
	}
	if st, m := a.rpc(opA, "listbannedpubkeys"); st != http.StatusOK || strings.Contains(js(m["result"]), carol.Pub) {
		t.Fatalf("a.test listbannedpubkeys: %d %v", st, m)
	}
	if st, m := b.rpc(opB, "banpubkey", "nothex"); st != http.StatusBadRequest || !strings.HasPrefix(js(m["error"]), `"invalid:`) {
		t.Fatalf("banpubkey of a bad key: %d %v", st, m)
	}
	if st, m := b.rpc(opB, "frobnicate"); st != http.StatusBadRequest {
		t.Fatalf("unknown method: %d %v", st, m)
	}
	// The banned key's writes are blocked on b.test, HTTP and WebSocket;
	// a.test takes them.
	if ans := b.submit(carol, signed(t, carol, 9, nostr.Tags{{"h", ch}}, "hi b")); ans.Accepted || !strings.HasPrefix(ans.Message, "blocked:") {
		t.Fatalf("banned key on b.test over HTTP: %+v", ans)
	}
	rc, ok := b.authed(carol, "ws://"+b.host)
	if !ok {
		t.Fatal("carol's AUTH on b.test refused")
	}
	rc.sendJSON([]any{"EVENT", signed(t, carol, 9, nostr.Tags{{"h", ch}}, "hi b ws")})
	if okMsg := rc.expect("OK"); string(okMsg[2]) != "false" || !strings.Contains(string(okMsg[3]), "blocked:") {
		t.Fatalf("banned key on b.test over WebSocket: %s", joinRaw(okMsg))
	}
	a.accept(carol, signed(t, carol, 9, nostr.Tags{{"h", ch}}, "hi a"))
	if st, _ := b.rpc(opB, "allowpubkey", carol.Pub); st != http.StatusOK {
		t.Fatalf("allowpubkey: %d", st)
	}
	b.accept(carol, signed(t, carol, 9, nostr.Tags{{"h", ch}}, "hi b again"))

	// banevent removes the event from reads and refuses it again.
	if st, m := b.rpc(opB, "banevent", rootB.ID, "off topic"); st != http.StatusOK {
		t.Fatalf("banevent: %d %v", st, m)
	}
	if evs := b.events(bob, map[string]any{"ids": []string{rootB.ID}}); len(evs) != 0 {
		t.Fatalf("banned event still served: %d", len(evs))
	}
	if ans := b.submit(bob, rootB); ans.Accepted || !strings.HasPrefix(ans.Message, "blocked:") {
		t.Fatalf("banned event resubmitted: %+v", ans)
	}

	// changerelay* change b.test's NIP-11 only.
	for method, v := range map[string]string{"changerelayname": "Hive", "changerelaydescription": "buzzing", "changerelayicon": "https://b.test/icon.png"} {
		if st, m := b.rpc(opB, method, v); st != http.StatusOK {
			t.Fatalf("%s: %d %v", method, st, m)
		}
	}
	if _, d := b.info(); d.Name != "Hive" || d.Description != "buzzing" || d.Icon != "https://b.test/icon.png" {
		t.Fatalf("b.test NIP-11 after changes: %+v", d)
	}
	if _, d := a.info(); d.Name == "Hive" || d.Icon != "" {
		t.Fatalf("a.test NIP-11 changed: %+v", d)
	}
	if st, _ := b.rpc(opB, "changerelayicon", "javascript:alert(1)"); st != http.StatusBadRequest {
		t.Fatalf("changerelayicon with a bad URL: %d", st)
	}

	// addcommunity / disablecommunity: the default community's operators;
	// the new community is served at once, with its own key.
	if st, m := b.rpc(opB, "addcommunity", "wasps", "c.test", "Wasps"); st != http.StatusBadRequest || !strings.HasPrefix(js(m["error"]), `"restricted:`) {
		t.Fatalf("addcommunity by b's operator: %d %v", st, m)
	}
	st, m := a.rpc(opA, "addcommunity", "wasps", "c.test", "Wasps")
	if st != http.StatusOK {
		t.Fatalf("addcommunity: %d %v", st, m)
	}
	c := onHost(t, r, "c.test")
	if st, d := c.info(); st != http.StatusOK || d.Name != "Wasps" || d.Self == pubA || d.Self == pubB || !strings.Contains(js(m["result"]), d.Self) {
		t.Fatalf("c.test NIP-11 after addcommunity: %d %+v (%v)", st, d, m)
	}
	if st, _ := a.rpc(opA, "addcommunity", "wasps2", "b.test"); st != http.StatusBadRequest {
		t.Fatalf("addcommunity on a taken hostname: %d", st)
	}
	if st, _ := a.rpc(opA, "disablecommunity", "wasps"); st != http.StatusOK {
		t.Fatalf("disablecommunity: %d", st)
	}
	if st, _ := c.info(); st != http.StatusNotFound {
		t.Fatalf("disabled community's NIP-11: %d, want 404", st)
	}
	if !c.socketRefused(r) {
		t.Fatal("disabled community: WebSocket served")
	}
}

// A community added by the operator command's code path while the relay
// runs is served at once on its hostname, signing with its own key.
func TestCommunityAddedWhileRunning(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	bob := testkit.NewKey(t)
	d := onHost(t, r, "d.test")
	if st, doc := d.info(); st != http.StatusOK || doc.Self != r.App.Signer.PublicKey() {
		t.Fatalf("before any hostname, the default community serves every host: %d %+v", st, doc)
	}
	pub, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "dees", Hosts: []string{"d.test"}, Name: "Dees"})
	if err != nil {
		t.Fatal(err)
	}
	r.ForgetCommunities() // the relay's TTL (a few seconds) would do the same
	if st, doc := d.info(); st != http.StatusOK || doc.Self != pub {
		t.Fatalf("d.test after add: %d %+v", st, doc)
	}
	ch := createChannelID()
	d.accept(bob, signed(t, bob, 9007, nostr.Tags{{"h", ch}, {"name", "dee"}, {"visibility", "open"}}, ""))
	if evs := d.events(bob, map[string]any{"kinds": []int{39000}, "#d": []string{ch}}); len(evs) != 1 || evs[0].PubKey != pub {
		t.Fatalf("d.test 39000: %+v", evs)
	}
	// As on make dev (hostnames registered): a host that was unknown a
	// moment ago is served on the first request after `add`, no waiting.
	e := onHost(t, r, "e.test")
	if st, _ := e.info(); st != http.StatusNotFound {
		t.Fatalf("e.test before add: %d", st)
	}
	pubE, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "ees", Hosts: []string{"e.test"}})
	if err != nil {
		t.Fatal(err)
	}
	if st, doc := e.info(); st != http.StatusOK || doc.Self != pubE {
		t.Fatalf("e.test right after add: %d %+v", st, doc)
	}
	if rc, ok := e.authed(bob, "ws://"+e.host); !ok {
		t.Fatal("AUTH on e.test refused")
	} else {
		rc.c.CloseNow()
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

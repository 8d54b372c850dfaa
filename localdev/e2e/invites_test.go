package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// invitesCommunity is a relay whose default community enforces NIP-43
// membership, reached at a.test: its operator (an owner) and an admin the
// owner added by 9030.
type invitesCommunity struct {
	r          *Relay
	h          *hosted
	owner, adm user
}

func newInvitesCommunity(t *testing.T, o Options) *invitesCommunity {
	t.Helper()
	r := StartTest(t, o)
	ctx := ctxT(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	c := &invitesCommunity{r: r, h: onHost(t, r, "a.test"), owner: testkit.NewKey(t), adm: testkit.NewKey(t)}
	if err := community.AddOperator(ctx, r.App.Store, "default", c.owner.Pub); err != nil {
		t.Fatal(err)
	}
	if st, m := c.rpc(t, "setrelaymembership", true); st != http.StatusOK {
		t.Fatalf("setrelaymembership: %d %v", st, m)
	}
	c.h.accept(c.owner, signed(t, c.owner, 9030, nostr.Tags{{"p", c.adm.Pub}, {"role", "admin"}}, ""))
	r.ForgetCommunities()
	return c
}

// rpc is a NIP-86 call by the owner.
func (c *invitesCommunity) rpc(t *testing.T, method string, params ...any) (int, map[string]any) {
	t.Helper()
	if params == nil {
		params = []any{}
	}
	body, _ := json.Marshal(map[string]any{"method": method, "params": params})
	st, out := c.h.do(&c.owner, http.MethodPost, "/", "application/nostr+json+rpc", "", body)
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	return st, m
}

// mintAnswer is POST /api/invites's answer as the Buzz desktop app reads
// it (desktop/src/shared/api/invites.ts mintInvite).
type mintAnswer struct {
	Code          string `json:"code"`
	ExpiresAt     int64  `json:"expires_at"`
	MaxUses       *int   `json:"max_uses"`
	UsesRemaining *int   `json:"uses_remaining"`
	URL           string `json:"url"`
	Error         string `json:"error"`
}

// mint is POST /api/invites by u with body (as the desktop sends it).
func (c *invitesCommunity) mint(t *testing.T, u user, body string) (int, mintAnswer) {
	t.Helper()
	st, out := c.h.do(&u, http.MethodPost, "/api/invites", "application/json", "", []byte(body))
	var m mintAnswer
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("mint answer %d %s", st, out)
	}
	return st, m
}

// claimAnswer is POST /api/invites/claim's answer (invites.ts claimInvite).
type claimAnswer struct {
	Status      string `json:"status"`
	CommunityID string `json:"community_id"`
	Host        string `json:"host"`
	Role        string `json:"role"`
	Error       string `json:"error"`
}

func claimOn(t *testing.T, h *hosted, u user, code, receipt string) (int, claimAnswer) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"code": code, "policy_receipt": receipt})
	if receipt == "" {
		body, _ = json.Marshal(map[string]any{"code": code}) // undefined is left out by JSON.stringify
	}
	st, out := h.do(&u, http.MethodPost, "/api/invites/claim", "application/json", "", body)
	var a claimAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("claim answer %d %s", st, out)
	}
	return st, a
}

// members is the community's 13534 as key:role, read by the owner.
func (c *invitesCommunity) members(t *testing.T) []string {
	t.Helper()
	var evs []nostr.Event
	if err := json.Unmarshal(c.h.query(c.owner, "/query", map[string]any{"kinds": []int{13534}}), &evs); err != nil || len(evs) != 1 {
		t.Fatalf("13534: %v %v", evs, err)
	}
	var out []string
	for _, tg := range evs[0].Tags[1:] {
		out = append(out, tg[1]+":"+tg[2])
	}
	return out
}

// expire ends every invite's life in the database the relay serves.
func expire(t *testing.T, r *Relay) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), r.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE invites SET expires_at = 1`); err != nil {
		t.Fatal(err)
	}
}

// TestBuzzDesktopInviteFlowOverHTTP plays the Buzz desktop app's invite
// calls as its source makes them (desktop/src/shared/api/invites.ts):
// an admin mints (ttl_secs, max_uses; code, expires_at, max_uses,
// uses_remaining, url), a newcomer claims (joined; the 13534 lists it; it
// then reads and writes), claims again (already_member, idempotent), a
// spent, an expired and an unknown code get one and the same refusal, the
// join policy without and with terms (acceptance receipt required), and
// the landing page of the url.
func TestBuzzDesktopInviteFlowOverHTTP(t *testing.T) {
	t.Run("database sessions", func(t *testing.T) { buzzDesktopInviteFlow(t, Options{}) })
	t.Run("make dev sessions", func(t *testing.T) { buzzDesktopInviteFlow(t, Options{}) })
}

func buzzDesktopInviteFlow(t *testing.T, o Options) {
	c := newInvitesCommunity(t, o)
	h := c.h
	newcomer, second, third := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)

	st, m := c.mint(t, c.adm, `{"ttl_secs":3600,"max_uses":1}`)
	if st != http.StatusOK || m.Code == "" || m.MaxUses == nil || *m.MaxUses != 1 || m.UsesRemaining == nil || *m.UsesRemaining != 1 {
		t.Fatalf("mint: %d %+v", st, m)
	}
	if m.URL != "http://"+h.host+"/invite/"+m.Code {
		t.Fatalf("landing url %q", m.URL)
	}
	if st, u := c.mint(t, c.owner, ``); st != http.StatusOK || u.MaxUses != nil || u.UsesRemaining != nil {
		t.Fatalf("an owner's unlimited default invite: %d %+v", st, u)
	}

	// The landing page: static HTML on the community's host handing the
	// code to the app; the same page for any code.
	page := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, h.base()+path, nil)
		resp, err := h.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, resp.Header.Get("Content-Type"), "\n")
		body, _ := io.ReadAll(resp.Body)
		b.Write(body)
		return resp.StatusCode, b.String()
	}
	if st, body := page("/invite/" + m.Code); st != http.StatusOK || !strings.HasPrefix(body, "text/html") ||
		!strings.Contains(body, m.Code) || !strings.Contains(body, "buzz://join?code="+m.Code) {
		t.Fatalf("landing page: %d %s", st, body)
	}
	if st, body := page("/invite/%3Cscript%3E"); st != http.StatusOK || strings.Contains(body, "<script>") {
		t.Fatalf("landing page must escape what it shows: %d %s", st, body)
	}

	// GET /info, which the desktop reads before each invite call for a
	// canonical origin (push.origin): JSON, none advertised.
	var info map[string]any
	if st, out := h.do(nil, http.MethodGet, "/info", "", "", nil); st != http.StatusOK || json.Unmarshal(out, &info) != nil || info["push"] != nil || info["pubkey"] == nil {
		t.Fatalf("GET /info: %d %s", st, out)
	}

	// Claim: joined; the 13534 lists the key; it reads and writes.
	st, a := claimOn(t, h, newcomer, m.Code, "")
	if st != http.StatusOK || a.Status != "joined" || a.CommunityID != "default" || a.Host != "a.test" || a.Role != "member" {
		t.Fatalf("claim: %d %+v", st, a)
	}
	if !slices.Contains(c.members(t), newcomer.Pub+":member") {
		t.Fatalf("13534 after the claim: %v", c.members(t))
	}
	ch := createChannelID()
	h.accept(newcomer, signed(t, newcomer, 9007, nostr.Tags{{"h", ch}, {"name", "joined"}}, ""))
	h.accept(newcomer, signed(t, newcomer, 9, nostr.Tags{{"h", ch}}, "hello from the newcomer"))
	var got []nostr.Event
	if err := json.Unmarshal(h.query(newcomer, "/query", map[string]any{"kinds": []int{9}, "#h": []string{ch}}), &got); err != nil || len(got) != 1 {
		t.Fatalf("the newcomer reads: %v %v", got, err)
	}

	// Again: idempotent, nothing taken.
	if st, a := claimOn(t, h, newcomer, m.Code, ""); st != http.StatusOK || a.Status != "already_member" {
		t.Fatalf("claim again: %d %+v", st, a)
	}
	// Used up, expired, unknown: Buzz's relay's answers (403 with
	// invite_exhausted, invite_expired, invite_invalid), which the
	// desktop app's invite screens tell apart; one answer for every code
	// it does not honour (unknown, garbage), and expiry before use.
	st, spent := claimOn(t, h, second, m.Code, "")
	if st != http.StatusForbidden || spent.Error != invite.ErrUsedUp.Error() {
		t.Fatalf("a spent code: %d %+v", st, spent)
	}
	_, fresh := c.mint(t, c.adm, `{"ttl_secs":60}`)
	expire(t, c.r)
	for name, want := range map[string]struct {
		code string
		err  error
	}{
		"spent and expired": {m.Code, invite.ErrExpired}, "expired": {fresh.Code, invite.ErrExpired},
		"unknown": {strings.Repeat("a", 32), invite.ErrInvalid}, "garbage": {"<>", invite.ErrInvalid},
	} {
		if st, a := claimOn(t, h, third, want.code, ""); st != http.StatusForbidden || a.Error != want.err.Error() {
			t.Fatalf("%s code answered %d %q, want 403 %q", name, st, a.Error, want.err)
		}
	}
	if slices.Contains(c.members(t), second.Pub+":member") || slices.Contains(c.members(t), third.Pub+":member") {
		t.Fatal("a refused claim admitted its key")
	}

	// Join policy: none set is {} and no pages, as Buzz's relay answers.
	get := func(path string) (int, []byte) { return h.do(nil, http.MethodGet, path, "", "", nil) }
	if st, out := get("/api/join-policy"); st != http.StatusOK || string(out) != "{}" {
		t.Fatalf("no policy: %d %s", st, out)
	}
	if st, _ := get("/api/join-policy/terms"); st != http.StatusNotFound {
		t.Fatalf("terms page without terms: %d", st)
	}
	accept := func(code, version string, age bool) (int, string) {
		body, _ := json.Marshal(map[string]any{"code": code, "policy_version": version, "age_confirmed": age})
		st, out := h.do(nil, http.MethodPost, "/api/invites/accept-policy", "application/json", "", body)
		var r struct{ Receipt, Error string }
		_ = json.Unmarshal(out, &r)
		return st, r.Receipt + r.Error
	}
	if st, _ := accept("x", "1", true); st != http.StatusNotFound {
		t.Fatalf("accept without a policy: %d", st)
	}
	// The operator sets terms through NIP-86; a non-operator cannot.
	policy := map[string]any{"version": "2026-01", "terms_markdown": "# Terms\nBe kind.", "privacy_markdown": "We keep little.", "age_attestation_required": true}
	if st, _ := c.rpcAs(t, newcomer, "setjoinpolicy", policy); st != http.StatusForbidden {
		t.Fatalf("a member sets the join policy: %d", st)
	}
	if st, out := c.rpc(t, "setjoinpolicy", policy); st != http.StatusOK || out["result"] != true {
		t.Fatalf("setjoinpolicy: %d %v", st, out)
	}
	var doc struct {
		Policy struct {
			Terms   string `json:"terms_markdown"`
			Privacy string `json:"privacy_markdown"`
			Age     bool   `json:"age_attestation_required"`
			Version string `json:"version"`
		} `json:"policy"`
	}
	if st, out := get("/api/join-policy"); st != http.StatusOK || json.Unmarshal(out, &doc) != nil ||
		doc.Policy.Version != "2026-01" || !doc.Policy.Age || doc.Policy.Terms != "# Terms\nBe kind." || doc.Policy.Privacy != "We keep little." {
		t.Fatalf("policy: %d %s", st, out)
	}
	if st, body := page("/api/join-policy/terms"); st != http.StatusOK || !strings.HasPrefix(body, "text/html") || !strings.Contains(body, "Be kind.") {
		t.Fatalf("terms page: %d %s", st, body)
	}
	if st, body := page("/api/join-policy/privacy"); st != http.StatusOK || !strings.Contains(body, "We keep little.") {
		t.Fatalf("privacy page: %d %s", st, body)
	}
	_, pm := c.mint(t, c.adm, `{"max_uses":5}`)
	if st, a := claimOn(t, h, second, pm.Code, ""); st != http.StatusForbidden || !strings.Contains(a.Error, "join_policy_required") {
		t.Fatalf("a claim without accepting the policy: %d %+v", st, a)
	}
	if st, _ := accept(pm.Code, "2025-12", true); st != http.StatusBadRequest {
		t.Fatalf("an old version accepted: %d", st)
	}
	if st, _ := accept(pm.Code, "2026-01", false); st != http.StatusBadRequest {
		t.Fatalf("accepted without the age attestation: %d", st)
	}
	st, receipt := accept(pm.Code, "2026-01", true)
	if st != http.StatusOK || receipt == "" {
		t.Fatalf("accept-policy: %d %q", st, receipt)
	}
	if st, a := claimOn(t, h, second, m.Code, receipt); st != http.StatusForbidden {
		t.Fatalf("a receipt bound to another code: %d %+v", st, a)
	}
	if st, a := claimOn(t, h, second, pm.Code, receipt); st != http.StatusOK || a.Status != "joined" {
		t.Fatalf("a claim with the receipt: %d %+v", st, a)
	}
	if st, _ := c.rpc(t, "clearjoinpolicy"); st != http.StatusOK {
		t.Fatal("clearjoinpolicy")
	}
	if st, out := get("/api/join-policy"); st != http.StatusOK || string(out) != "{}" {
		t.Fatalf("cleared policy: %d %s", st, out)
	}
}

// rpcAs is a NIP-86 call by u.
func (c *invitesCommunity) rpcAs(t *testing.T, u user, method string, params ...any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"method": method, "params": params})
	st, out := c.h.do(&u, http.MethodPost, "/", "application/nostr+json+rpc", "", body)
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	return st, m
}

// TestInviteClaimsAreExactlyOnceUnderConcurrency: 50 keys claim a 10-use
// code at once: exactly 10 are admitted (and listed in the 13534), the
// others get the one refusal, none a 5xx.
func TestInviteClaimsAreExactlyOnceUnderConcurrency(t *testing.T) {
	c := newInvitesCommunity(t, Options{})
	_, m := c.mint(t, c.adm, `{"max_uses":10}`)
	keys := make([]user, 50)
	for i := range keys {
		keys[i] = testkit.NewKey(t)
	}
	statuses := make([]int, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = claimOn(t, c.h, k, m.Code, "")
		}()
	}
	wg.Wait()
	joined := 0
	for i, st := range statuses {
		switch {
		case st >= 500:
			t.Errorf("claim %d: %d", i, st)
		case st == http.StatusOK:
			joined++
		case st != http.StatusForbidden:
			t.Errorf("claim %d: %d, want 200 or 403", i, st)
		}
	}
	listed := 0
	list := c.members(t)
	for _, k := range keys {
		if slices.Contains(list, k.Pub+":member") {
			listed++
		}
	}
	if joined != 10 || listed != 10 {
		t.Fatalf("%d claims admitted, %d keys listed; want exactly 10 of 50", joined, listed)
	}
}

// TestInviteSecurity is the security probe's kind of cases: a member
// that is no admin, or a stranger, cannot mint (and a non-member cannot
// ask for a 28935); a claim cannot admit into another community; an
// invite of an admin removed since stops working; a revoked invite too;
// claims are rate-limited per key.
func TestInviteSecurity(t *testing.T) {
	c := newInvitesCommunity(t, Options{})
	ctx := ctxT(t)
	member, stranger := testkit.NewKey(t), testkit.NewKey(t)
	_, m := c.mint(t, c.adm, `{"max_uses":3}`)
	if st, _ := claimOn(t, c.h, member, m.Code, ""); st != http.StatusOK {
		t.Fatal("member's claim")
	}
	for name, u := range map[string]user{"a member": member, "a stranger": stranger} {
		if st, a := c.mint(t, u, `{}`); st != http.StatusForbidden || !strings.HasPrefix(a.Error, "restricted: ") {
			t.Errorf("%s mints: %d %+v", name, st, a)
		}
	}
	if st, a := c.mint(t, c.adm, `{"ttl_secs":5}`); st != http.StatusBadRequest || !strings.HasPrefix(a.Error, "invalid: ") {
		t.Errorf("a ttl below the bound: %d %+v", st, a)
	}
	if st, a := c.mint(t, c.adm, `{"max_uses":"10"}`); st != http.StatusBadRequest {
		t.Errorf("a max_uses that is no integer: %d %+v", st, a)
	}
	rc := authedOn(t, c.h, member)
	rc.sendJSON([]any{"REQ", "inv", map[string]any{"kinds": []int{28935}, "limit": 1}})
	if cl := rc.expect("CLOSED"); !strings.HasPrefix(str(t, cl[2]), "restricted: ") {
		t.Errorf("a member's 28935: %s", joinRaw(cl))
	}
	rs := authedOn(t, c.h, stranger)
	rs.sendJSON([]any{"REQ", "inv", map[string]any{"kinds": []int{28935}, "limit": 1}})
	if cl := rs.expect("CLOSED"); str(t, cl[2]) != "restricted: not a relay member" {
		t.Errorf("a stranger's 28935: %s", joinRaw(cl))
	}

	// Another community on the same relay: its code does not admit here,
	// nor this one's there.
	opB := testkit.NewKey(t)
	if _, err := community.Create(ctx, c.r.App.Store, c.r.App.Sealer, c.r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}, Operators: []string{opB.Pub}}); err != nil {
		t.Fatal(err)
	}
	hb := onHost(t, c.r, "b.test")
	st, out := hb.do(&opB, http.MethodPost, "/api/invites", "application/json", "", []byte(`{"max_uses":5}`))
	var mb mintAnswer
	if st != http.StatusOK || json.Unmarshal(out, &mb) != nil {
		t.Fatalf("mint in bees: %d %s", st, out)
	}
	if st, a := claimOn(t, c.h, stranger, mb.Code, ""); st != http.StatusForbidden || a.Error != invite.ErrInvalid.Error() {
		t.Fatalf("bees' code admitted into default: %d %+v", st, a)
	}
	if st, a := claimOn(t, hb, stranger, m.Code, ""); st != http.StatusForbidden || a.Error != invite.ErrInvalid.Error() {
		t.Fatalf("default's code admitted into bees: %d %+v", st, a)
	}

	// The admin is removed: its invites stop working; the owner's keep on.
	_, fromAdmin := c.mint(t, c.adm, `{"max_uses":5}`)
	_, fromOwner := c.mint(t, c.owner, `{"max_uses":5}`)
	c.h.accept(c.owner, signed(t, c.owner, 9031, nostr.Tags{{"p", c.adm.Pub}}, ""))
	late1, late2 := testkit.NewKey(t), testkit.NewKey(t)
	if st, a := claimOn(t, c.h, late1, fromAdmin.Code, ""); st != http.StatusForbidden || a.Error != invite.ErrInvalid.Error() {
		t.Fatalf("a removed admin's invite admitted: %d %+v", st, a)
	}
	if st, a := claimOn(t, c.h, late1, fromOwner.Code, ""); st != http.StatusOK || a.Status != "joined" {
		t.Fatalf("the owner's invite: %d %+v", st, a)
	}
	// Revoked over NIP-86: it stops working.
	if st, out := c.rpc(t, "revokeinvite", fromOwner.Code); st != http.StatusOK || out["result"] != true {
		t.Fatalf("revokeinvite: %d %v", st, out)
	}
	if st, a := claimOn(t, c.h, late2, fromOwner.Code, ""); st != http.StatusForbidden || a.Error != invite.ErrInvalid.Error() {
		t.Fatalf("a revoked invite admitted: %d %+v", st, a)
	}

	// A key guessing codes is cut off: at most 10 claims a minute.
	guesser := testkit.NewKey(t)
	limited := false
	for i := range 12 {
		st, a := claimOn(t, c.h, guesser, fmt.Sprintf("guess%02d", i), "")
		if st == http.StatusTooManyRequests && strings.HasPrefix(a.Error, "rate-limited: ") {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("12 guesses a minute from one key were not rate-limited")
	}
}

// authedOn is a raw WebSocket connection to h's host authenticated as u.
func authedOn(t *testing.T, h *hosted, u user) *rawConn {
	t.Helper()
	rc, err := h.dial()
	if err != nil {
		t.Fatal(err)
	}
	rc.send(`["REQ","warmup",{"limit":0}]`)
	challenge := str(t, rc.expect("AUTH")[1])
	rc.expect("CLOSED")
	ev := signed(t, u, 22242, nostr.Tags{{"relay", "ws://" + h.host}, {"challenge", challenge}}, "")
	rc.sendJSON([]any{"AUTH", ev})
	if ok := rc.expect("OK"); string(ok[2]) != "true" {
		t.Fatalf("AUTH refused: %s", joinRaw(ok))
	}
	return rc
}

// TestFlotillaInviteFlowWithWelshman runs Flotilla's invite flows with
// welshman 0.8.15 (nip29clients/invites.mjs): an admin's client obtains a
// relay-signed 28935, a new key joins with its claim and then reads and
// writes in a members-only community; a second use of the single-use claim
// is refused invite_exhausted, an unknown claim invite_invalid (Buzz's). Without node on PATH it
// is skipped; BUZZ_REQUIRE_INTEROP=1 makes that a failure.
func TestFlotillaInviteFlowWithWelshman(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "welshman invite test", map[string]string{
		"@welshman/net": "0.8.15", "@welshman/util": "0.8.15", "@welshman/signer": "0.8.15", "nostr-tools": "2.25.2", "ws": "8.18.3",
	})
	// Both session modes: the database's, and make dev's (S3 idle state).
	t.Run("database sessions", func(t *testing.T) { flotillaInviteFlow(t, node, dir, Options{}) })
	t.Run("make dev sessions", func(t *testing.T) { flotillaInviteFlow(t, node, dir, Options{}) })
}

func flotillaInviteFlow(t *testing.T, node, dir string, o Options) {
	r := StartTest(t, o)
	ctx := ctxT(t)
	owner, adm := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddOperator(ctx, r.App.Store, "default", owner.Pub); err != nil {
		t.Fatal(err)
	}
	bo, ba := newBridge(t, r, owner), newBridge(t, r, adm)
	if st, m := bo.rpc("setrelaymembership", true); st != http.StatusOK {
		t.Fatalf("setrelaymembership: %d %v", st, m)
	}
	bo.accept(signed(t, owner, 9030, nostr.Tags{{"p", adm.Pub}, {"role", "admin"}}, ""))
	r.ForgetCommunities()
	ch := newChannel(t, ba, "open")
	ba.accept(signed(t, adm, 9, nostr.Tags{{"h", ch}}, "welcome, whoever you are"))

	var got struct {
		Checks []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"checks"`
		Claim string `json:"claim"`
	}
	stderr := RunNode(t, node, dir, 2*time.Minute, &got, "invites.mjs", r.WSURL, adm.Secret, ch, r.App.Signer.PublicKey())
	if len(got.Checks) < 15 {
		t.Errorf("%d checks ran: the script stopped early (stderr %s)", len(got.Checks), stderr)
	}
	for _, c := range got.Checks {
		if !c.OK {
			t.Errorf("%s: failed (%s)", c.Name, c.Detail)
		}
	}
	// The claim admitted exactly one key: the 13534 lists the owner, the
	// admin and one member.
	if list := membershipList(t, bo); len(list) != 3 {
		t.Errorf("13534 after the flow: %v", list)
	}
}

// TestSameClaimTwiceAtOnceTakesOneUse: one key sends its claim ten times
// at once: one is joined, the others already_member, and the invite lost
// exactly one use (a race lost on the member row gives its use back).
func TestSameClaimTwiceAtOnceTakesOneUse(t *testing.T) {
	c := newInvitesCommunity(t, Options{})
	_, m := c.mint(t, c.adm, `{"max_uses":5}`)
	k := testkit.NewKey(t)
	answers := make([]string, 10)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, a := claimOn(t, c.h, k, m.Code, "")
			answers[i] = fmt.Sprint(st, " ", a.Status)
		}()
	}
	wg.Wait()
	joined := 0
	for _, a := range answers {
		switch a {
		case "200 joined":
			joined++
		case "200 already_member":
		default:
			t.Errorf("a concurrent claim of one key answered %q", a)
		}
	}
	conn, err := pgx.Connect(context.Background(), c.r.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var uses int
	if err := conn.QueryRow(context.Background(), `SELECT uses FROM invites WHERE code_hash = $1`, invite.Hash(m.Code)).Scan(&uses); err != nil {
		t.Fatal(err)
	}
	if joined != 1 || uses != 1 {
		t.Fatalf("%d joined, %d uses taken; want 1 and 1 (%v)", joined, uses, answers)
	}
}

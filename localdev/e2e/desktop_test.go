package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Buzz desktop's moderation pane and admin console (issue 52), driven as
// the app drives them: moderation.ts's NIP-98 GETs (u, method, nonce; the
// URL signed with its query string) and the admin console's native calls
// (commands/admin: a signed GET or a JSON body bound by the token).

// desktopSetup is two communities on one relay: a.test (the default, its
// operator op) and b.test (opB's), a member alice with a channel message,
// a report of it by bob, a banned key.
type desktopSetup struct {
	r                                         *Relay
	a, b                                      *hosted
	op, opB, alice, bob, stranger, banned, tk user
	msg, report                               nostr.Event
}

func newDesktopSetup(t *testing.T, o Options) *desktopSetup {
	r := StartTest(t, o)
	ctx := ctxT(t)
	s := &desktopSetup{r: r}
	for _, k := range []*user{&s.op, &s.opB, &s.alice, &s.bob, &s.stranger, &s.banned, &s.tk} {
		*k = testkit.NewKey(t)
	}
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, r.App.Store, "default", s.op.Pub); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees", Operators: []string{s.opB.Pub}}); err != nil {
		t.Fatal(err)
	}
	s.a, s.b = onHost(t, r, "a.test"), onHost(t, r, "b.test")
	ch := createChannelID()
	s.a.accept(s.alice, signed(t, s.alice, 9007, nostr.Tags{{"h", ch}, {"name", "general"}, {"visibility", "open"}}, ""))
	s.msg = signed(t, s.alice, 9, nostr.Tags{{"h", ch}}, "a message someone will report")
	s.a.accept(s.alice, s.msg)
	// moderation.ts submitReport: p the author, e the event with the type.
	s.report = signed(t, s.bob, 1984, nostr.Tags{{"p", s.alice.Pub}, {"e", s.msg.ID, "spam"}}, "this is spam")
	s.a.accept(s.bob, s.report)
	// banMember: a 9040 with no h tag, the reason in a tag.
	s.a.accept(s.op, signed(t, s.op, 9040, nostr.Tags{{"p", s.banned.Pub}, {"reason", "flooding"}}, ""))
	return s
}

// appGet is moderationGet / fetch_admin_json: GET url signed by u (no
// token when u is nil), Authorization the only header.
func (h *hosted) appGet(u *user, pathWithQuery string) (int, http.Header, []byte) {
	return h.appDo(u, http.MethodGet, pathWithQuery, nil, "")
}

// appDo sends method to h with body (JSON), signed by u for signFor's URL
// ("" = the request's own).
func (h *hosted) appDo(u *user, method, pathWithQuery string, body []byte, signFor string) (int, http.Header, []byte) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.base()+pathWithQuery, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if u != nil {
		if signFor == "" {
			signFor = h.base() + pathWithQuery
		}
		req.Header.Set("Authorization", u.Token(h.t, method, signFor, body, time.Now()))
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, pathWithQuery, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

func decodeRows(t *testing.T, what string, out []byte) []map[string]any {
	t.Helper()
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("%s: not a JSON array: %s", what, out)
	}
	return rows
}

var uuidShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestDesktopModerationPane: GET /moderation/reports, /audit and
// /restricted answer the community's operator in Buzz's row shapes, paged
// and filtered as Buzz does; a stranger, a member, another community's
// operator and a banned key get 403 restricted: (no token 401), and each
// community sees only its own queue.
func TestDesktopModerationPane(t *testing.T) {
	s := newDesktopSetup(t, Options{})
	a := s.a
	exp := time.Now().Add(time.Hour).Unix()
	a.accept(s.op, signed(t, s.op, 9042, nostr.Tags{{"p", s.tk.Pub}, {"expiration", strconv.FormatInt(exp, 10)}, {"reason", "cool off"}}, ""))

	// listReports({limit: 100, status: "open"}): URLSearchParams order.
	st, hdr, out := a.appGet(&s.op, "/moderation/reports?limit=100&status=open")
	if st != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") || hdr.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("reports: %d %v %s", st, hdr, out)
	}
	rows := decodeRows(t, "reports", out)
	if len(rows) != 1 {
		t.Fatalf("reports: %s", out)
	}
	rep := rows[0]
	for k, want := range map[string]any{"report_event_id": s.report.ID, "reporter_pubkey": s.bob.Pub, "target_kind": "event",
		"target": s.msg.ID, "report_type": "spam", "note": "this is spam", "status": "open", "channel_id": nil, "resolved_by": nil} {
		if rep[k] != want {
			t.Errorf("report %s = %v, want %v (%s)", k, rep[k], want, out)
		}
	}
	if id, _ := rep["id"].(string); !uuidShape.MatchString(id) {
		t.Errorf("report id %v is not UUID-shaped", rep["id"])
	}
	if ts, _ := rep["created_at"].(string); ts == "" || !strings.HasSuffix(ts, "Z") {
		t.Errorf("created_at %v, want RFC 3339", rep["created_at"])
	}

	// listAuditActions(1) and without a limit (the two actions may share a
	// second: newest first, then by id).
	_, _, out = a.appGet(&s.op, "/moderation/audit?limit=1")
	if rows = decodeRows(t, "audit", out); len(rows) != 1 || rows[0]["actor_pubkey"] != s.op.Pub {
		t.Fatalf("audit?limit=1: %s", out)
	}
	_, _, out = a.appGet(&s.op, "/moderation/audit")
	actions := map[string]map[string]any{}
	for _, row := range decodeRows(t, "audit", out) {
		actions[row["action"].(string)] = row
	}
	if ban, to := actions["ban"], actions["timeout"]; len(actions) != 2 || ban["public_reason"] != "flooding" || ban["target_pubkey"] != s.banned.Pub ||
		to["target_pubkey"] != s.tk.Pub || to["public_reason"] != "cool off" {
		t.Fatalf("audit: %s", out)
	}

	// listRestrictions(): a ban and a timeout, each naming its moderator.
	_, _, out = a.appGet(&s.op, "/moderation/restricted")
	rows = decodeRows(t, "restricted", out)
	byKey := map[string]map[string]any{}
	for _, row := range rows {
		byKey[row["pubkey"].(string)] = row
	}
	if b := byKey[s.banned.Pub]; len(rows) != 2 || b == nil || b["banned"] != true || b["ban_reason"] != "flooding" || b["ban_expires_at"] != nil || b["actor_pubkey"] != s.op.Pub {
		t.Fatalf("restricted (ban): %s", out)
	}
	if m := byKey[s.tk.Pub]; m == nil || m["banned"] != false || m["muted_until"] == nil || m["mute_reason"] != "cool off" {
		t.Fatalf("restricted (timeout): %s", out)
	}

	// resolveReport over the socket's path (a 9044), then the filters.
	a.accept(s.op, signed(t, s.op, 9044, nostr.Tags{{"report", s.report.ID}, {"status", "dismissed"}, {"action", "dismiss"}}, ""))
	if _, _, out = a.appGet(&s.op, "/moderation/reports?status=open"); len(decodeRows(t, "open", out)) != 0 {
		t.Errorf("open after dismissal: %s", out)
	}
	_, _, out = a.appGet(&s.op, "/moderation/reports?status=dismissed")
	if rows = decodeRows(t, "dismissed", out); len(rows) != 1 || rows[0]["resolved_by"] != s.op.Pub || rows[0]["resolved_at"] == nil {
		t.Errorf("dismissed: %s", out)
	}
	// Paging as Buzz: limit clamped to 1-500, not a number 400.
	if st, _, out = a.appGet(&s.op, "/moderation/reports?limit=100000"); st != 200 {
		t.Errorf("limit=100000: %d %s", st, out)
	}
	if st, _, out = a.appGet(&s.op, "/moderation/reports?limit=abc"); st != 400 || !strings.Contains(string(out), "invalid:") {
		t.Errorf("limit=abc: %d %s", st, out)
	}
	if st, _, out = a.appGet(&s.op, "/moderation/reports?status=nuked"); st != 400 {
		t.Errorf("status=nuked: %d %s", st, out)
	}

	// The attackers, on every route.
	for _, path := range []string{"/moderation/reports", "/moderation/audit?limit=5", "/moderation/restricted"} {
		for _, c := range []struct {
			name string
			u    user
		}{{"stranger", s.stranger}, {"member", s.alice}, {"reporter", s.bob}, {"another community's operator", s.opB}, {"banned key", s.banned}} {
			st, _, out := a.appGet(&c.u, path)
			if st != http.StatusForbidden || !strings.Contains(string(out), "restricted:") {
				t.Errorf("%s %s: %d %s, want 403 restricted:", c.name, path, st, out)
			}
		}
		if st, _, out := a.appGet(nil, path); st != http.StatusUnauthorized {
			t.Errorf("no token %s: %d %s, want 401", path, st, out)
		}
		// b's operator with a token for b.test's URL, sent to a.test.
		if st, _, out := a.appDo(&s.opB, http.MethodGet, path, nil, s.b.base()+path); st != http.StatusUnauthorized {
			t.Errorf("a token for b.test %s: %d %s, want 401", path, st, out)
		}
		// A token for another path (or query) of the same host.
		if st, _, _ := a.appDo(&s.op, http.MethodGet, path, nil, a.base()+"/moderation/other"); st != http.StatusUnauthorized {
			t.Errorf("a token for another URL %s: %d, want 401", path, st)
		}
	}
	// Each community its own: b's operator reads b's empty queue and log.
	for _, path := range []string{"/moderation/reports", "/moderation/audit", "/moderation/restricted"} {
		if st, _, out := s.b.appGet(&s.opB, path); st != 200 || len(decodeRows(t, path, out)) != 0 {
			t.Errorf("b.test %s: %d %s, want []", path, st, out)
		}
	}
	// A replayed token is refused.
	tok := s.op.Token(t, http.MethodGet, a.base()+"/moderation/restricted", nil, time.Now())
	for i, want := range []int{200, 401} {
		req, _ := http.NewRequest(http.MethodGet, a.base()+"/moderation/restricted", nil)
		req.Header.Set("Authorization", tok)
		resp, err := a.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token use %d: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
}

// TestDesktopAdminConsole: the admin console's routes (routes.rs) for the
// community's operator, each change through a NIP-86 method; the probe's
// 401 challenge; the attackers refused on every route with nothing
// changed; another community's report and host refused as missing.
func TestDesktopAdminConsole(t *testing.T) {
	s := newDesktopSetup(t, Options{})
	a := s.a
	const p = "/api/admin/v1"

	// admin_probe: unauthenticated first, 401 with WWW-Authenticate: Nostr;
	// then signed, a JSON array.
	st, hdr, out := a.appGet(nil, p+"/reports?limit=1")
	if st != 401 || !strings.HasPrefix(strings.ToLower(hdr.Get("WWW-Authenticate")), "nostr") {
		t.Fatalf("probe unauthenticated: %d %v %s", st, hdr, out)
	}
	st, hdr, out = a.appGet(&s.op, p+"/reports?limit=1")
	if st != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") || hdr.Get("Cache-Control") != "no-store" || string(out) != "[]" {
		t.Fatalf("probe signed: %d %v %s (escalated only by default: none)", st, hdr, out)
	}
	if st, _, out = a.appGet(&s.op, p+"/probe"); st != 200 || !strings.Contains(string(out), `"authMode":"nip98"`) {
		t.Fatalf("probe: %d %s", st, out)
	}

	// Reports: scope=all lists the open one in AdminReport's shape.
	_, _, out = a.appGet(&s.op, p+"/reports?scope=all&limit=50")
	rows := decodeRows(t, "admin reports", out)
	if len(rows) != 1 || rows[0]["reportEventId"] != s.report.ID || rows[0]["communityHost"] != "a.test" || rows[0]["targetKind"] != "event" || rows[0]["status"] != "open" {
		t.Fatalf("admin reports: %s", out)
	}
	id := rows[0]["id"].(string)
	for _, k := range []string{"id", "communityId"} {
		if v, _ := rows[0][k].(string); !uuidShape.MatchString(v) {
			t.Errorf("%s %v is not a UUID", k, rows[0][k])
		}
	}
	if st, _, out = a.appGet(&s.op, p+"/reports/"+id); st != 200 || !strings.Contains(string(out), s.report.ID) {
		t.Fatalf("report detail: %d %s", st, out)
	}
	if st, _, out = a.appGet(&s.op, p+"/reports?limit=0"); st != 400 {
		t.Errorf("limit=0: %d %s", st, out)
	}
	// Escalate (decision only), then the default view shows it.
	body := []byte(`{"action":"escalate","reason":"needs the owner"}`)
	if st, _, out = a.appDo(&s.op, http.MethodPost, p+"/reports/"+id+"/resolve", body, ""); st != 200 || !strings.Contains(string(out), `"status":"escalated"`) {
		t.Fatalf("resolve escalate: %d %s", st, out)
	}
	if _, _, out = a.appGet(&s.op, p+"/reports"); len(decodeRows(t, "escalated", out)) != 1 {
		t.Errorf("default (escalated) view: %s", out)
	}
	// Resolving a closed report again is refused; the queue unchanged.
	if st, _, out = a.appDo(&s.op, http.MethodPost, p+"/reports/"+id+"/resolve", []byte(`{"action":"dismiss"}`), ""); st < 400 || st >= 500 {
		t.Errorf("resolve twice: %d %s", st, out)
	}

	// Direct actions on members, ?communityHost= this community.
	host := "?communityHost=a.test"
	victim := testkit.NewKey(t)
	ban := []byte(`{"requestId":"6f1d2c3b-0000-4000-8000-000000000001","reason":"spam"}`)
	if st, _, out = a.appDo(&s.op, http.MethodPost, p+"/members/"+victim.Pub+"/ban"+host, ban, ""); st != 200 || !strings.Contains(string(out), `"state":"succeeded"`) {
		t.Fatalf("ban: %d %s", st, out)
	}
	to := []byte(`{"requestId":"6f1d2c3b-0000-4000-8000-000000000002","expirationSecs":3600}`)
	if st, _, out = a.appDo(&s.op, http.MethodPost, p+"/members/"+s.bob.Pub+"/timeout"+host, to, ""); st != 200 {
		t.Fatalf("timeout: %d %s", st, out)
	}
	_, _, out = a.appGet(&s.op, p+"/members/restrictions"+host)
	var page struct {
		Items      []map[string]any `json:"items"`
		NextCursor *string          `json:"nextCursor"`
	}
	if json.Unmarshal(out, &page) != nil || len(page.Items) != 3 || page.NextCursor != nil {
		t.Fatalf("restrictions: %s", out)
	}
	if st, _, out = a.appDo(&s.op, http.MethodDelete, p+"/members/"+victim.Pub+"/ban"+host, nil, ""); st != 204 {
		t.Fatalf("unban: %d %s", st, out)
	}
	if st, _, out = a.appDo(&s.op, http.MethodDelete, p+"/members/"+s.bob.Pub+"/timeout"+host, nil, ""); st != 204 {
		t.Fatalf("untimeout: %d %s", st, out)
	}
	// The bob's timeout lifted: bob may write again.
	a.accept(s.bob, signed(t, s.bob, 1, nil, "back"))
	// Delete an event: no longer served.
	del := []byte(`{"requestId":"6f1d2c3b-0000-4000-8000-000000000003","reason":"off topic"}`)
	if st, _, out = a.appDo(&s.op, http.MethodPost, p+"/events/"+s.msg.ID+"/delete"+host, del, ""); st != 200 {
		t.Fatalf("delete event: %d %s", st, out)
	}
	if evs := a.events(s.alice, map[string]any{"ids": []string{s.msg.ID}}); len(evs) != 0 {
		t.Errorf("deleted event still served: %v", evs)
	}
	// Another community's host is refused, unknown or not: the same answer.
	for _, other := range []string{"b.test", "nowhere.test"} {
		st, _, out := a.appDo(&s.op, http.MethodPost, p+"/members/"+victim.Pub+"/ban?communityHost="+other, ban, "")
		if st != 400 || !strings.Contains(string(out), "communityHost must be a host of the community") {
			t.Errorf("communityHost=%s: %d %s", other, st, out)
		}
	}

	// Operators: list, add, remove (NIP-86's, so the last stays).
	if _, _, out = a.appGet(&s.op, p+"/operators"); !strings.Contains(string(out), `"pubkey":"`+s.op.Pub+`"`) {
		t.Fatalf("operators: %s", out)
	}
	op2 := testkit.NewKey(t)
	if st, _, out = a.appDo(&s.op, http.MethodPut, p+"/operators/"+op2.Pub, []byte(`{"role":"operator"}`), ""); st != 200 {
		t.Fatalf("put operator: %d %s", st, out)
	}
	if st, _, out = a.appDo(&s.op, http.MethodPut, p+"/operators/"+op2.Pub, []byte(`{"role":"moderator"}`), ""); st != 400 {
		t.Errorf("put moderator: %d %s", st, out)
	}
	if st, _, out = a.appDo(&op2, http.MethodDelete, p+"/operators/"+op2.Pub, nil, ""); st != 200 {
		t.Fatalf("delete operator: %d %s", st, out)
	}

	// b's report, asked for through a.test: 404, as a made-up id.
	bReport := signed(t, s.stranger, 1984, nostr.Tags{{"p", s.opB.Pub}}, "b's")
	s.b.accept(s.stranger, bReport)
	for _, rid := range []string{AdminIDOf(bReport.ID), "00000000-0000-4000-8000-000000000000", "not-a-uuid"} {
		if st, _, out := a.appGet(&s.op, p+"/reports/"+url.PathEscape(rid)); st != 404 {
			t.Errorf("report %s through a.test: %d %s, want 404", rid, st, out)
		}
	}

	// The attackers, on every route: refused, nothing changed.
	before, _ := s.r.App.Store.PubkeyRulesListRestricted(ctxT(t), "default")
	routes := []struct{ method, path string }{
		{"GET", p + "/probe"}, {"GET", p + "/reports?scope=all"}, {"GET", p + "/reports/" + id},
		{"POST", p + "/reports/" + id + "/resolve"}, {"GET", p + "/feedback"}, {"GET", p + "/operators"},
		{"PUT", p + "/operators/" + s.stranger.Pub}, {"DELETE", p + "/operators/" + s.op.Pub},
		{"GET", p + "/members/restrictions" + host}, {"POST", p + "/members/" + s.alice.Pub + "/ban" + host},
		{"DELETE", p + "/members/" + s.banned.Pub + "/ban" + host}, {"POST", p + "/members/" + s.alice.Pub + "/timeout" + host},
		{"POST", p + "/events/" + s.report.ID + "/delete" + host},
	}
	bodies := map[string][]byte{"POST": []byte(`{"requestId":"6f1d2c3b-0000-4000-8000-0000000000ff","action":"dismiss"}`), "PUT": []byte(`{"role":"operator"}`)}
	for _, rt := range routes {
		for _, c := range []struct {
			name string
			u    user
		}{{"stranger", s.stranger}, {"member", s.alice}, {"another community's operator", s.opB}, {"banned key", s.banned}} {
			// The door answers before any body is read: 403 restricted:.
			st, _, out := a.appDo(&c.u, rt.method, rt.path, bodies[rt.method], "")
			if st != http.StatusForbidden || !strings.Contains(string(out), "restricted:") {
				t.Errorf("%s %s %s: %d %s, want 403 restricted:", c.name, rt.method, rt.path, st, out)
			}
		}
		if st, hdr, _ := a.appDo(nil, rt.method, rt.path, bodies[rt.method], ""); st != 401 || hdr.Get("WWW-Authenticate") != "Nostr" {
			t.Errorf("no token %s %s: %d", rt.method, rt.path, st)
		}
	}
	after, _ := s.r.App.Store.PubkeyRulesListRestricted(ctxT(t), "default")
	if len(after) != len(before) {
		t.Errorf("the attackers changed the restrictions: %d -> %d", len(before), len(after))
	}
	if ops, _ := community.Operators(ctxT(t), s.r.App.Store, "default"); len(ops) != 1 || ops[0] != s.op.Pub {
		t.Errorf("the attackers changed the operators: %v", ops)
	}
}

// AdminIDOf is the admin API's id of a 64-hex id (bridge.AdminID).
func AdminIDOf(h string) string {
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// TestDesktopFeedbackKind: kind 42000 as Buzz's relay takes it, validated,
// kept for the operators (admin /feedback), never served as an event;
// refused from a banned key; another community's operator never sees it.
func TestDesktopFeedbackKind(t *testing.T) {
	s := newDesktopSetup(t, Options{})
	a := s.a
	fb := signed(t, s.alice, 42000, nostr.Tags{{"category", "bug"}, {"client", "buzz-desktop"}}, "the sidebar flickers")
	a.accept(s.alice, fb)
	if ans := a.submit(s.alice, fb); !strings.HasPrefix(ans.Message, "duplicate:") {
		t.Errorf("repeat: %+v", ans)
	}
	for _, c := range []struct {
		name string
		ev   nostr.Event
	}{
		{"empty body", signed(t, s.alice, 42000, nil, "  ")},
		{"two categories", signed(t, s.alice, 42000, nostr.Tags{{"category", "bug"}, {"category", "praise"}}, "x")},
		{"unknown category", signed(t, s.alice, 42000, nostr.Tags{{"category", "idea"}}, "x")},
		{"body too large", signed(t, s.alice, 42000, nil, strings.Repeat("x", 32*1024+1))},
	} {
		if ans := a.submit(s.alice, c.ev); ans.Accepted || !strings.HasPrefix(ans.Message, "invalid:") {
			t.Errorf("%s: %+v, want invalid:", c.name, ans)
		}
	}
	if ans := a.submit(s.banned, signed(t, s.banned, 42000, nil, "let me in")); ans.Accepted || !strings.HasPrefix(ans.Message, "blocked:") {
		t.Errorf("banned key's feedback: %+v", ans)
	}
	// Never served, not even to its author.
	if evs := a.events(s.alice, map[string]any{"kinds": []int{42000}}); len(evs) != 0 {
		t.Errorf("feedback served as an event: %v", evs)
	}
	// The operators read it.
	_, _, out := a.appGet(&s.op, "/api/admin/v1/feedback")
	rows := decodeRows(t, "feedback", out)
	if len(rows) != 1 || rows[0]["eventId"] != fb.ID || rows[0]["category"] != "bug" || rows[0]["status"] != "new" || rows[0]["bodySummary"] != "the sidebar flickers" {
		t.Fatalf("feedback list: %s", out)
	}
	id := rows[0]["id"].(string)
	if st, _, out := a.appGet(&s.op, "/api/admin/v1/feedback/"+id); st != 200 || !strings.Contains(string(out), `"body":"the sidebar flickers"`) || !strings.Contains(string(out), "buzz-desktop") {
		t.Fatalf("feedback detail: %d %s", st, out)
	}
	if st, _, out := a.appDo(&s.op, http.MethodPatch, "/api/admin/v1/feedback/"+id, []byte(`{"status":"reviewed"}`), ""); st != 200 || !strings.Contains(string(out), "reviewed") {
		t.Fatalf("feedback patch: %d %s", st, out)
	}
	if st, _, out := a.appDo(&s.op, http.MethodPatch, "/api/admin/v1/feedback/"+id, []byte(`{"status":"deleted"}`), ""); st != 400 {
		t.Errorf("feedback patch to an unknown status: %d %s", st, out)
	}
	for _, c := range []struct {
		name string
		u    user
	}{{"member", s.alice}, {"another community's operator", s.opB}, {"banned key", s.banned}} {
		if st, _, out := a.appGet(&c.u, "/api/admin/v1/feedback/"+id); st != 403 {
			t.Errorf("%s reads the feedback: %d %s", c.name, st, out)
		}
		if st, _, out := a.appDo(&c.u, http.MethodPatch, "/api/admin/v1/feedback/"+id, []byte(`{"status":"archived"}`), ""); st != 403 {
			t.Errorf("%s patches the feedback: %d %s", c.name, st, out)
		}
	}
	// b's operator, at b.test, does not see a's feedback.
	if st, _, out := s.b.appGet(&s.opB, "/api/admin/v1/feedback/"+id); st != 404 {
		t.Errorf("a's feedback through b.test: %d %s, want 404", st, out)
	}
	if _, _, out := s.b.appGet(&s.opB, "/api/admin/v1/feedback"); string(out) != "[]" {
		t.Errorf("b's feedback list: %s", out)
	}
}

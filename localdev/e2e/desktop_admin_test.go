package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// The admin console's report lifecycle and list filters (issue 52), as
// the app drives them (commands/admin: post_admin_json with a body the
// NIP-98 token binds; fetch_admin_json with the query it signs): reopen,
// cancel, and the list's after/before/reportType/targetKind/communityId.

// TestDesktopAdminReopen: POST /api/admin/v1/reports/{id}/reopen returns a
// closed report to open (NIP-86 reopenreport), once per requestId: a
// retry answers the same without reopening a report closed since; an open
// report 409; 30 reopens at once with their own requestIds, one wins; bad
// bodies 400; another community's report 404 as a made-up id; every
// attacker 403 before the body is read.
func TestDesktopAdminReopen(t *testing.T) {
	s := newDesktopSetup(t, Options{})
	a := s.a
	const p = "/api/admin/v1/reports/"
	id := AdminIDOf(s.report.ID)
	reopen := func(u *user, rid, req string) (int, string) {
		st, _, out := a.appDo(u, http.MethodPost, p+rid+"/reopen", []byte(req), "")
		return st, string(out)
	}
	status := func() string {
		t.Helper()
		_, _, out := a.appGet(&s.op, p+id)
		var d struct {
			Report struct {
				Status string `json:"status"`
			} `json:"report"`
		}
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatalf("detail: %s", out)
		}
		return d.Report.Status
	}
	resolve := func(action string) {
		t.Helper()
		if st, _, out := a.appDo(&s.op, http.MethodPost, p+id+"/resolve", []byte(`{"action":"`+action+`"}`), ""); st != 200 {
			t.Fatalf("resolve %s: %d %s", action, st, out)
		}
	}
	r1 := `{"requestId":"7a000000-0000-4000-8000-000000000001","reason":"closed too soon"}`
	// Open: not reopenable, 409.
	if st, out := reopen(&s.op, id, r1); st != http.StatusConflict || !strings.Contains(out, "not reopenable") {
		t.Fatalf("reopen an open report: %d %s, want 409", st, out)
	}
	resolve("dismiss")
	if st, out := reopen(&s.op, id, r1); st != 200 || out != `{"status":"open"}` {
		t.Fatalf("reopen: %d %s", st, out)
	}
	if got := status(); got != "open" {
		t.Fatalf("after reopen: %s", got)
	}
	// Closed again (escalated); the same requestId answers the same and
	// leaves it escalated; a new one reopens it.
	resolve("escalate")
	if st, out := reopen(&s.op, id, r1); st != 200 || out != `{"status":"open"}` {
		t.Fatalf("retry: %d %s", st, out)
	}
	if got := status(); got != "escalated" {
		t.Fatalf("a retry reopened the report closed since: %s", got)
	}
	if st, out := reopen(&s.op, id, `{"requestId":"7a000000-0000-4000-8000-000000000002"}`); st != 200 {
		t.Fatalf("reopen escalated: %d %s", st, out)
	}
	if _, _, out := a.appGet(&s.op, "/api/admin/v1/reports?status=open"); len(decodeRows(t, "open", out)) != 1 {
		t.Errorf("open list after reopen: %s", out)
	}
	// 30 at once, each its own requestId, on a closed report: one reopens,
	// the others find it open.
	resolve("dismiss")
	var wg sync.WaitGroup
	codes := make([]int, 30)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = reopen(&s.op, id, fmt.Sprintf(`{"requestId":"7b000000-0000-4000-8000-%012d"}`, i))
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		switch c {
		case 200:
			won++
		case http.StatusConflict:
		default:
			t.Errorf("a concurrent reopen answered %d", c)
		}
	}
	if won != 1 || status() != "open" {
		t.Errorf("30 concurrent reopens: %d won, status %s", won, status())
	}

	// Bad bodies: 400, nothing changed.
	resolve("dismiss")
	for _, body := range []string{`{}`, `{"requestId":"nope"}`, `{"requestId":"7a000000-0000-4000-8000-000000000009","extra":1}`, `not json`} {
		if st, out := reopen(&s.op, id, body); st != 400 {
			t.Errorf("reopen %s: %d %s, want 400", body, st, out)
		}
	}
	// Missing vs not yours: b's report through a.test, a made-up id, a
	// malformed one: the same 404.
	bReport := signed(t, s.stranger, 1984, nostr.Tags{{"p", s.opB.Pub}}, "b's")
	s.b.accept(s.stranger, bReport)
	for _, rid := range []string{AdminIDOf(bReport.ID), "00000000-0000-4000-8000-000000000000", "not-a-uuid"} {
		if st, out := reopen(&s.op, url.PathEscape(rid), r1); st != 404 {
			t.Errorf("reopen %s through a.test: %d %s, want 404", rid, st, out)
		}
	}
	// The attackers: 403 restricted: (no token 401); the report stays closed.
	for _, c := range []struct {
		name string
		u    user
	}{{"stranger", s.stranger}, {"member", s.alice}, {"another community's operator", s.opB}, {"banned key", s.banned}} {
		if st, out := reopen(&c.u, id, `{"requestId":"7c000000-0000-4000-8000-000000000001"}`); st != 403 || !strings.Contains(out, "restricted:") {
			t.Errorf("%s reopens: %d %s", c.name, st, out)
		}
	}
	if st, hdr, _ := a.appDo(nil, http.MethodPost, p+id+"/reopen", []byte(r1), ""); st != 401 || hdr.Get("WWW-Authenticate") != "Nostr" {
		t.Errorf("no token: %d", st)
	}
	// A token signed for another body (the app binds its payload).
	other := []byte(`{"requestId":"7c000000-0000-4000-8000-000000000002"}`)
	req, _ := http.NewRequest(http.MethodPost, a.base()+p+id+"/reopen", strings.NewReader(r1))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", s.op.Token(t, http.MethodPost, a.base()+p+id+"/reopen", other, time.Now()))
	if resp, err := a.hc.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("a token for another body: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	if got := status(); got != "dismissed" {
		t.Errorf("the attackers changed the report: %s", got)
	}
	// b's operator reopens b's report at b.test, not a's.
	if st, _, out := s.b.appDo(&s.opB, http.MethodPost, p+id+"/reopen", []byte(r1), ""); st != 404 {
		t.Errorf("a's report through b.test: %d %s", st, out)
	}
}

// TestDesktopAdminCancel: POST /api/admin/v1/reports/{id}/cancel with the
// app's {"actionId"}: no action here is ever left failed (resolve applies
// it in its NIP-86 call), so a well-formed cancel answers 409 as Buzz
// answers an action that is not cancellable; bad bodies 400; missing and
// not yours 404; attackers 403; the report unchanged.
func TestDesktopAdminCancel(t *testing.T) {
	s := newDesktopSetup(t, Options{})
	a := s.a
	path := "/api/admin/v1/reports/" + AdminIDOf(s.report.ID) + "/cancel"
	body := []byte(`{"actionId":"8a000000-0000-4000-8000-000000000001"}`)
	if st, _, out := a.appDo(&s.op, http.MethodPost, path, body, ""); st != http.StatusConflict || !strings.Contains(string(out), "not cancellable") {
		t.Fatalf("cancel: %d %s, want 409", st, out)
	}
	for _, b := range []string{`{}`, `{"actionId":"x"}`, `{"actionId":"8a000000-0000-4000-8000-000000000001","reason":"r"}`} {
		if st, _, out := a.appDo(&s.op, http.MethodPost, path, []byte(b), ""); st != 400 {
			t.Errorf("cancel %s: %d %s, want 400", b, st, out)
		}
	}
	bReport := signed(t, s.stranger, 1984, nostr.Tags{{"p", s.opB.Pub}}, "b's")
	s.b.accept(s.stranger, bReport)
	for _, rid := range []string{AdminIDOf(bReport.ID), "00000000-0000-4000-8000-000000000000"} {
		if st, _, out := a.appDo(&s.op, http.MethodPost, "/api/admin/v1/reports/"+rid+"/cancel", body, ""); st != 404 {
			t.Errorf("cancel %s through a.test: %d %s, want 404", rid, st, out)
		}
	}
	for _, c := range []struct {
		name string
		u    user
	}{{"stranger", s.stranger}, {"member", s.alice}, {"another community's operator", s.opB}, {"banned key", s.banned}} {
		if st, _, out := a.appDo(&c.u, http.MethodPost, path, body, ""); st != 403 || !strings.Contains(string(out), "restricted:") {
			t.Errorf("%s cancels: %d %s", c.name, st, out)
		}
	}
	if st, _, _ := a.appDo(nil, http.MethodPost, path, body, ""); st != 401 {
		t.Errorf("no token: %d", st)
	}
	if open, _ := s.r.App.Store.ModerationReportsListOpen(ctxT(t), "default", "", 10); len(open) != 1 {
		t.Errorf("open reports after the cancels: %d", len(open))
	}
}

// TestDesktopAdminReportFilters: GET /api/admin/v1/reports's filters as
// Buzz's relay applies them: after (inclusive) and before (exclusive) RFC
// 3339 times, reportType, targetKind, communityId (another's lists
// nothing), limit (newest first); an unknown parameter or a bad time 400;
// attackers 403.
func TestDesktopAdminReportFilters(t *testing.T) {
	s := newDesktopSetup(t, Options{})
	a := s.a
	// A second report, ten minutes older, of a pubkey.
	old := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	pk := signedAt(t, s.stranger, nostr.Timestamp(old.Unix()), 1984, nostr.Tags{{"p", s.bob.Pub, "impersonation"}}, "not bob")
	a.accept(s.stranger, pk)
	list := func(q string) []map[string]any {
		t.Helper()
		st, _, out := a.appGet(&s.op, "/api/admin/v1/reports?scope=all&"+q)
		if st != 200 {
			t.Fatalf("%s: %d %s", q, st, out)
		}
		return decodeRows(t, q, out)
	}
	ids := func(rows []map[string]any) string {
		var out []string
		for _, r := range rows {
			out = append(out, r["reportEventId"].(string))
		}
		return strings.Join(out, ",")
	}
	rfc := func(t time.Time) string { return url.QueryEscape(t.UTC().Format(time.RFC3339)) }
	all := list("limit=50")
	if ids(all) != s.report.ID+","+pk.ID {
		t.Fatalf("all, newest first: %s", ids(all))
	}
	community := all[0]["communityId"].(string)
	for _, c := range []struct{ q, want string }{
		{"limit=1", s.report.ID},
		{"after=" + rfc(old), s.report.ID + "," + pk.ID},    // inclusive
		{"after=" + rfc(old.Add(time.Second)), s.report.ID}, // past the old one
		{"before=" + rfc(old), ""},                          // exclusive
		{"before=" + rfc(old.Add(time.Second)), pk.ID},      // just the old one
		{"after=" + rfc(old.Add(-time.Minute)) + "&before=" + rfc(old.Add(time.Minute)), pk.ID},
		{"after=" + url.QueryEscape(old.Add(500*time.Millisecond).UTC().Format(time.RFC3339Nano)), s.report.ID}, // a fraction rounds up
		{"reportType=spam", s.report.ID},
		{"reportType=impersonation", pk.ID},
		{"reportType=nudity", ""},
		{"targetKind=event", s.report.ID},
		{"targetKind=pubkey", pk.ID},
		{"targetKind=blob", ""},
		{"communityId=" + community, s.report.ID + "," + pk.ID},
		{"communityId=00000000-0000-4000-8000-000000000000", ""},
		{"targetKind=pubkey&reportType=spam", ""},
	} {
		if got := ids(list(c.q)); got != c.want {
			t.Errorf("%s: %s, want %s", c.q, got, c.want)
		}
	}
	for _, q := range []string{"cursor=abc", "after=yesterday", "before=2026-13-01T00:00:00Z", "communityId=default", "targetKind=channel", "limit=201", "status=closed"} {
		if st, _, out := a.appGet(&s.op, "/api/admin/v1/reports?"+q); st != 400 {
			t.Errorf("%s: %d %s, want 400", q, st, out)
		}
	}
	// The moderation pane's list keeps its own shape and paging.
	if _, _, out := a.appGet(&s.op, "/moderation/reports?status=open&limit=1"); len(decodeRows(t, "moderation", out)) != 1 {
		t.Errorf("moderation reports limit=1: %s", out)
	}
	for _, c := range []struct {
		name string
		u    user
	}{{"stranger", s.stranger}, {"member", s.alice}, {"another community's operator", s.opB}, {"banned key", s.banned}} {
		if st, _, out := a.appGet(&c.u, "/api/admin/v1/reports?scope=all&after="+rfc(old)); st != 403 {
			t.Errorf("%s lists: %d %s", c.name, st, out)
		}
	}
	// b's operator at b.test sees none of a's.
	if _, _, out := s.b.appGet(&s.opB, "/api/admin/v1/reports?scope=all"); string(out) != "[]" {
		t.Errorf("b's list: %s", out)
	}
}

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/transport/console"
)

// chromium is Debian's chromium (localdev/chromium.sh installs it when
// missing and it can); without it the test is skipped, or fails under
// BUZZ_REQUIRE_INTEROP=1 (CI).
func chromium(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "../chromium.sh").Output()
	if err != nil {
		if os.Getenv("BUZZ_REQUIRE_INTEROP") == "1" {
			t.Fatalf("localdev/chromium.sh: %v", err)
		}
		t.Skipf("no chromium for the console test: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// The operator console in a real browser (chromium, puppeteer-core, a
// NIP-07 shim signing with a test key): an operator bans a key and its
// next write is refused through the relay, lifts the ban and the write is
// accepted, resolves a report, adds a community that then answers on its
// own host, disables it (its host answers 404) and enables it again (it
// answers as before); a key that is not an operator gets the relay's refusal, shown
// on the page, and changes nothing. The page is served with its CSP.
func TestOperatorConsoleInChromium(t *testing.T) {
	node, dir := NodePackages(t, "console", "operator console test", map[string]string{"puppeteer-core": "25.16.0", "nostr-tools": "2.25.2"})
	browser := chromium(t)
	r := newRelay(t)
	ctx := ctxT(t)
	op, stranger, victim, reporter := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	a := onHost(t, r, "a.test")
	post := signed(t, victim, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "spam"}, {"visibility", "open"}}, "")
	a.accept(victim, post)
	report := signed(t, reporter, 1984, nostr.Tags{{"e", post.ID, "spam"}, {"p", victim.Pub}}, "spam channel")
	a.accept(reporter, report)

	port := r.HTTPURL[strings.LastIndex(r.HTTPURL, ":")+1:]
	var got struct {
		Steps                               []string
		Error                               string
		CSP                                 string
		Status                              []string
		ReportsBefore, ReportsAfter         []string
		BannedOnPage, BannedAfterLift       []string
		VictimWhileBanned, VictimAfterUnban string
		Communities                         []string
		NewCommunityName                    string
		DisabledState, DisabledName         string
		EnabledState, EnabledName           string
		OperatorErrors                      []string
		Stranger, StrangerBan               struct{ Text, Cls string }
		StrangerBans                        int
	}
	RunNode(t, node, dir, 3*time.Minute, &got, "console.mjs", browser, port, op.Secret, stranger.Secret, victim.Secret, "second")
	ctx = ctxT(t) // the browser's run took the first one's time
	for _, s := range got.Steps {
		t.Log(s)
	}
	if got.Error != "" {
		t.Fatalf("console script: %s", got.Error)
	}
	if got.CSP != console.CSP {
		t.Errorf("CSP %q", got.CSP)
	}
	if len(got.OperatorErrors) != 0 {
		t.Errorf("page errors for the operator: %v", got.OperatorErrors)
	}
	for _, want := range []string{"database", "last_write", "open_connections", "media_bytes"} {
		if !strings.Contains(strings.Join(got.Status, " "), want) {
			t.Errorf("status shows %v, missing %s", got.Status, want)
		}
	}
	if len(got.BannedOnPage) != 1 || got.BannedOnPage[0] != victim.Pub || len(got.BannedAfterLift) != 0 {
		t.Errorf("bans on the page: %v, after the lift %v", got.BannedOnPage, got.BannedAfterLift)
	}
	if !strings.HasPrefix(got.VictimWhileBanned, "blocked:") || got.VictimAfterUnban != "accepted" {
		t.Errorf("the victim's write while banned %q, after the unban %q", got.VictimWhileBanned, got.VictimAfterUnban)
	}
	if len(got.ReportsBefore) != 1 || got.ReportsBefore[0] != report.ID || len(got.ReportsAfter) != 0 {
		t.Errorf("reports before %v, after the resolve %v", got.ReportsBefore, got.ReportsAfter)
	}
	if open, err := r.App.Store.ModerationReportsListOpen(ctx, "default", "", 10); err != nil || len(open) != 0 {
		t.Errorf("open reports after the resolve: %v %v", open, err)
	}
	if !strings.Contains(strings.Join(got.Communities, " "), "second") || got.NewCommunityName != "Second" {
		t.Errorf("communities %v, the new one's NIP-11 name %q", got.Communities, got.NewCommunityName)
	}
	if got.DisabledState != "disabled" || got.DisabledName != "HTTP 404" || got.EnabledState != "enabled" || got.EnabledName != "Second" {
		t.Errorf("disable then enable from the console: %q (NIP-11 %q), then %q (NIP-11 %q)", got.DisabledState, got.DisabledName, got.EnabledState, got.EnabledName)
	}
	c, err := r.App.Store.CommunitiesGet(ctx, "second")
	if err != nil || len(c.Operators) != 1 || c.Operators[0] != op.Pub || c.DisabledAt != nil {
		t.Errorf("the added community: %+v %v", c, err)
	}
	if got.Stranger.Cls != "error" || !strings.HasPrefix(got.Stranger.Text, "restricted:") || got.StrangerBans != 0 {
		t.Errorf("the stranger's page says %+v and lists %d bans", got.Stranger, got.StrangerBans)
	}
	if got.StrangerBan.Cls != "error" || !strings.HasPrefix(got.StrangerBan.Text, "restricted:") {
		t.Errorf("the stranger's ban: %+v", got.StrangerBan)
	}
	if rules, err := community.PubkeyRules(ctx, r.App.Store, "default", community.RuleBan); err != nil || len(rules) != 0 {
		t.Errorf("bans after the stranger's try: %v %v", rules, err)
	}
}

package e2e

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// The NIP-86 methods the operator console calls, each checked like the
// others: a key that is not an operator is refused (403 restricted:) and
// changes nothing; bad parameters are 4xx invalid:, never a 5xx; the last
// operator cannot be removed; a report resolves once; the deployment's
// communities are listed only to the default community's operators.
func TestNIP86OperatorMethodsAreCheckedLikeTheOthers(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	op, op2, stranger, victim, reporter := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	for _, h := range []struct{ id, host string }{{"default", "a.test"}} {
		if err := community.AddHost(ctx, r.App.Store, h.id, h.host, r.App.Directory); err != nil {
			t.Fatal(err)
		}
	}
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	a := onHost(t, r, "a.test")
	post := signed(t, victim, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "x"}, {"visibility", "open"}}, "")
	a.accept(victim, post)
	report := signed(t, reporter, 1984, nostr.Tags{{"e", post.ID, "spam"}, {"p", victim.Pub}}, "spam")
	a.accept(reporter, report)

	calls := [][]any{
		{"listoperators"}, {"addoperator", op2.Pub}, {"removeoperator", op.Pub},
		{"unbanpubkey", victim.Pub}, {"unallowpubkey", victim.Pub}, {"listtimedoutpubkeys"},
		{"listcommunities"}, {"mediausage"}, {"listrelaymembers"}, {"resolvereport", report.ID, "resolved"},
	}
	for _, c := range calls {
		st, m := a.rpc(stranger, c[0].(string), c[1:]...)
		if st != http.StatusForbidden || !strings.HasPrefix(rpcError(m), "restricted:") {
			t.Errorf("stranger %v: %d %v", c, st, m)
		}
	}
	if st, m := a.rpc(op, "listoperators"); st != 200 || len(m["result"].([]any)) != 1 {
		t.Fatalf("listoperators after the stranger: %d %v", st, m)
	}
	if open, _ := r.App.Store.ModerationReportsListOpen(ctx, "default", "", 10); len(open) != 1 {
		t.Fatalf("the stranger's resolvereport changed the queue: %v", open)
	}

	bad := [][]any{
		{"addoperator"}, {"addoperator", "npub1x"}, {"addoperator", strings.Repeat("A", 64)},
		{"removeoperator", strings.Repeat("ab", 32)}, {"removeoperator", op.Pub}, // not one; the last one
		{"unbanpubkey", victim.Pub}, {"unbanpubkey", 7}, {"unallowpubkey", victim.Pub},
		{"resolvereport"}, {"resolvereport", report.ID}, {"resolvereport", report.ID, "open"},
		{"resolvereport", report.ID, "resolved", "nuke"}, {"resolvereport", strings.Repeat("f", 63), "resolved"},
		{"resolvereport", strings.Repeat("f", 64), "resolved"}, {"mediausage"}, // media is off here
	}
	for _, c := range bad {
		st, m := a.rpc(op, c[0].(string), c[1:]...)
		if st != http.StatusBadRequest || !strings.HasPrefix(rpcError(m), "invalid:") {
			t.Errorf("operator %v: %d %v, want 400 invalid:", c, st, m)
		}
	}

	// The owner hands over: add, then remove themself.
	if st, m := a.rpc(op, "addoperator", op2.Pub); st != 200 {
		t.Fatalf("addoperator: %d %v", st, m)
	}
	if st, m := a.rpc(op2, "removeoperator", op.Pub); st != 200 {
		t.Fatalf("removeoperator: %d %v", st, m)
	}
	if st, m := a.rpc(op, "listoperators"); st != http.StatusForbidden {
		t.Fatalf("a removed operator still manages: %d %v", st, m)
	}

	// A ban with its expiry listed, lifted by unbanpubkey; a timeout (9042)
	// listed with its expiry, lifted the same way.
	if st, _ := a.rpc(op2, "banpubkey", victim.Pub, "spam"); st != 200 {
		t.Fatal("banpubkey")
	}
	if a := a.submit(victim, signed(t, victim, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "y"}, {"visibility", "open"}}, "")); a.Accepted ||
		!strings.HasPrefix(a.Message, "blocked:") {
		t.Fatalf("a banned key's write: %+v", a)
	}
	if st, m := a.rpc(op2, "unbanpubkey", victim.Pub); st != 200 {
		t.Fatalf("unbanpubkey: %d %v", st, m)
	}
	a.accept(victim, signed(t, victim, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "z"}, {"visibility", "open"}}, ""))
	exp := nostr.Now() + 3600
	a.accept(op2, signed(t, op2, 9042, nostr.Tags{{"p", victim.Pub}, {"expiration", nostrTime(exp)}}, ""))
	st, m := a.rpc(op2, "listtimedoutpubkeys")
	list, _ := json.Marshal(m["result"])
	if st != 200 || !strings.Contains(string(list), victim.Pub) || !strings.Contains(string(list), `"expires_at":`+nostrTime(exp)) {
		t.Fatalf("listtimedoutpubkeys: %d %s", st, list)
	}
	if st, _ := a.rpc(op2, "unbanpubkey", victim.Pub); st != 200 {
		t.Fatal("unbanpubkey of a timeout")
	}

	// The report resolves once.
	if st, m := a.rpc(op2, "resolvereport", report.ID, "dismissed", "dismiss"); st != 200 {
		t.Fatalf("resolvereport: %d %v", st, m)
	}
	if st, m := a.rpc(op2, "resolvereport", report.ID, "resolved"); st != http.StatusBadRequest {
		t.Fatalf("a second resolvereport: %d %v", st, m)
	}

	// Communities: listed for the default community's operators only.
	if st, m := a.rpc(op2, "addcommunity", "second", "b.test", "Second"); st != 200 {
		t.Fatalf("addcommunity: %d %v", st, m)
	}
	st, m = a.rpc(op2, "listcommunities")
	list, _ = json.Marshal(m["result"])
	if st != 200 || !strings.Contains(string(list), `"id":"second"`) || !strings.Contains(string(list), `"b.test"`) {
		t.Fatalf("listcommunities: %d %s", st, list)
	}
	b := onHost(t, r, "b.test")
	if st, m := b.rpc(op2, "listcommunities"); st != http.StatusBadRequest || !strings.HasPrefix(rpcError(m), "restricted:") {
		t.Fatalf("listcommunities from another community: %d %v", st, m)
	}
	if st, m := b.rpc(op2, "listrelaymembers"); st != 200 || !strings.Contains(mustJSON(m), op2.Pub) {
		t.Fatalf("listrelaymembers: %d %v", st, m)
	}
}

func nostrTime(ts nostr.Timestamp) string { return strconv.FormatInt(int64(ts), 10) }

// rpcError is a NIP-86 answer's error text.
func rpcError(m map[string]any) string { s, _ := m["error"].(string); return s }

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// GET /healthz?deep=1, signed by one of the community's operators (NIP-98),
// answers what an operator asks first: the database
// awake (it answered), the newest write, the open connections (counted
// where the sessions are kept: DynamoDB as shipped), the media
// bytes and the open reports; /admin is the console even with media on
// (whose GET /{blob} would otherwise take it).
func TestDeepHealthIsTheOperatorsStatus(t *testing.T) {
	t.Run("sessions in DynamoDB", func(t *testing.T) {
		r := StartTest(t, Options{Media: true})
		a := onHost(t, r, "127.0.0.1")
		alice, op := testkit.NewKey(t), testkit.NewKey(t)
		if err := community.AddOperator(ctxT(t), r.App.Store, r.App.Config.DefaultCommunity, op.Pub); err != nil {
			t.Fatal(err)
		}
		group := createChannelID()
		ev := signed(t, alice, 9007, nostr.Tags{{"h", group}, {"name", "x"}, {"visibility", "open"}}, "")
		a.accept(alice, ev)
		// The newest write is the newest event stored: the 9007 or the group
		// state the relay signed with it, which may be dated a second or more
		// ahead (ingest.RunAhead).
		newest := int64(ev.CreatedAt)
		for _, e := range newBridge(t, r, alice).query(map[string]any{"#d": []string{group}}) {
			newest = max(newest, int64(e.CreatedAt))
		}
		loggedIn(t, r) // one open WebSocket connection, wherever the sessions are kept
		var h struct {
			OK              bool   `json:"ok"`
			Database        string `json:"database"`
			LastWrite       int64  `json:"last_write"`
			OpenConnections *int64 `json:"open_connections"`
			MediaBytes      *int64 `json:"media_bytes"`
			OpenReports     *int64 `json:"open_reports"`
			Communities     *int64 `json:"communities"`
		}
		// With the sessions in DynamoDB a connection is counted once
		// the push function's greeting has recorded it among the open
		// ones (wire.Pusher.Greet), just after the challenge the
		// client answered: asked again for up to wait.
		var st int
		var body []byte
		for end := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
			st, body = a.do(&op, http.MethodGet, "/healthz?deep=1", "", "", nil)
			h.OpenConnections = nil
			if err := json.Unmarshal(body, &h); err != nil || (h.OpenConnections != nil && *h.OpenConnections >= 1) || time.Now().After(end) {
				break
			}
		}
		if err := json.Unmarshal(body, &h); err != nil || st != 200 || !h.OK || h.Database != "awake" || h.LastWrite != newest ||
			h.OpenConnections == nil || *h.OpenConnections < 1 || h.MediaBytes == nil || h.OpenReports == nil || h.Communities != nil {
			t.Fatalf("deep health: %d %s", st, body)
		}
		st, page := a.do(nil, http.MethodGet, "/admin", "", "", nil)
		if st != 200 || !strings.Contains(string(page), "operator console") {
			t.Fatalf("/admin with media on: %d %.200s", st, page)
		}
	})
}

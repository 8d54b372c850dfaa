package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Issue 52: Buzz's read-state API driven as the desktop app drives it
// (block/buzz desktop/src/shared/api/sidebar.ts: sidebarOperation's exact
// paths and bodies, NIP-98 over the full URL with its query string, a
// POST's payload tag; its validators on every answer), the relay's 40099
// timeline rows and the channel archive as a Buzz client sees them, and
// the attacks on each route.

// v1 is the desktop's request to the relay at base as u (nil: no token);
// the token names tokenURL ("" = the request's own URL).
func v1(t *testing.T, hc *http.Client, base string, u *user, method, pathQuery, tokenURL string, body []byte) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, base+pathQuery, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if u != nil {
		if tokenURL == "" {
			tokenURL = base + pathQuery
		}
		var payload []byte
		if method == http.MethodPost {
			payload = append([]byte{}, body...)
		}
		req.Header.Set("Authorization", u.Token(t, method, tokenURL, payload, time.Now()))
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, pathQuery, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: %d %s", method, pathQuery, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, m
}

var (
	v1UUID  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	v1Event = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// desktopCount is sidebar.ts's count validator.
func desktopCount(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if m["status"] == "unknown" {
		_, has := m["value"]
		return !has
	}
	n, ok := m["value"].(float64)
	return ok && n >= 0 && (m["status"] == "exact" || (m["status"] == "at_least" && n > 0))
}

// desktopRow is sidebar.ts's channel validator.
func desktopRow(t *testing.T, v any) map[string]any {
	t.Helper()
	c, ok := v.(map[string]any)
	_, name := c["name"].(string)
	_, typ := c["channel_type"].(string)
	_, arch := c["archived"].(bool)
	_, hid := c["hidden"].(bool)
	_, comp := c["latest_message_complete"].(bool)
	id, _ := c["latest_message_id"].(string)
	th, _ := c["threads"].(map[string]any)
	items, _ := th["items"].([]any)
	_, thc := th["complete"].(bool)
	if !ok || !v1UUID.MatchString(fmt.Sprint(c["channel_id"])) || !name || !typ || !arch || !hid || !comp ||
		!desktopCount(c["unread"]) || !desktopCount(c["attention"]) ||
		(c["latest_message_id"] != nil && !v1Event.MatchString(id)) || (c["latest_message_id"] == nil) != (c["latest_message_at"] == nil) ||
		th == nil || !thc || len(items) > 5 {
		t.Fatalf("the desktop app refuses this row: %v", v)
	}
	return c
}

func countOf(c map[string]any, field string) string {
	m := c[field].(map[string]any)
	return fmt.Sprintf("%v %v", m["status"], m["value"])
}

// sidebarPage is GET /buzz/v1/me/sidebar?limit=20[&cursor=] as
// sidebarOperation builds it, validated as createSidebarApi validates it.
func sidebarPage(t *testing.T, r *Relay, u user, cursor string) (map[string]map[string]any, any) {
	t.Helper()
	q := "limit=20"
	if cursor != "" {
		q += "&cursor=" + cursor
	}
	st, h, m := v1(t, nil, r.HTTPURL, &u, http.MethodGet, "/buzz/v1/me/sidebar?"+q, "", nil)
	if st != http.StatusOK || h.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("sidebar: %d %v %v", st, h, m)
	}
	acct, _ := m["account"].(map[string]any)
	if _, ok := acct["retention_seconds"].(float64); !ok {
		t.Fatalf("account %v", m["account"])
	}
	rows := map[string]map[string]any{}
	var ids []string
	for _, v := range m["channels"].([]any) {
		c := desktopRow(t, v)
		ids = append(ids, c["channel_id"].(string))
		rows[c["channel_id"].(string)] = c
	}
	if !slices.IsSorted(ids) {
		t.Fatalf("ids out of order: %v", ids)
	}
	return rows, m["next_cursor"]
}

func TestBuzzSidebarAsTheDesktopDrivesIt(t *testing.T) {
	r := newRelay(t)
	owner, orl := loggedIn(t, r)
	alice, arl := loggedIn(t, r)

	// NIP-11 advertises the API exactly as supportsSidebarApi requires.
	var doc relayinfo.Document
	req, _ := http.NewRequest(http.MethodGet, r.HTTPURL+"/", nil)
	req.Header.Set("Accept", "application/nostr+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || doc.BuzzV1 == nil {
		t.Fatalf("NIP-11: %v %+v", err, doc)
	}
	if b := doc.BuzzV1; b.Version != 1 || b.BasePath != "/buzz/v1" || b.MaxChannels != 20 || b.MaxIntents != 100 ||
		b.MaxContexts != 20 || b.MaxContextMessages != 100 || b.MaxThreadSummaries != 5 || !slices.Equal(b.EligibleKinds, []int{9, 40002, 45001, 45003}) {
		t.Fatalf("buzz_v1 %+v", b)
	}

	ch := testkit.ChannelID()
	publish(t, orl, owner, 9007, nostr.Tags{{"h", ch}, {"name", "general"}, {"visibility", "open"}}, "")
	publish(t, arl, alice, 9021, nostr.Tags{{"h", ch}}, "")
	m1 := signedAt(t, owner, nostr.Now()-2, 9, nostr.Tags{{"h", ch}}, "one") // a second of its own
	if err := orl.Publish(ctxT(t), m1); err != nil {
		t.Fatal(err)
	}
	m2 := publish(t, orl, owner, 40002, nostr.Tags{{"h", ch}, {"p", alice.Pub}}, "hi alice")
	publish(t, orl, owner, 9, nostr.Tags{{"h", ch}, {"e", m1.ID, "", "reply"}}, "a reply for nobody")

	rows, next := sidebarPage(t, r, alice, "")
	row := rows[ch]
	if row == nil || next != nil || countOf(row, "unread") != "exact 2" || countOf(row, "attention") != "exact 1" || row["latest_message_id"] == nil {
		t.Fatalf("alice's row %v (next %v)", row, next)
	}

	// Refresh by channel_ids, as sidebarOperation encodes it (URLSearchParams: %2C).
	other := testkit.ChannelID()
	publish(t, orl, owner, 9007, nostr.Tags{{"h", other}, {"name", "private"}, {"visibility", "private"}}, "")
	q := "/buzz/v1/me/sidebar?" + url.Values{"channel_ids": {ch + "," + other}}.Encode()
	st, _, m := v1(t, nil, r.HTTPURL, &alice, http.MethodGet, q, "", nil)
	if chs := m["channels"].([]any); st != http.StatusOK || len(chs) != 1 || desktopRow(t, chs[0])["channel_id"] != ch || m["next_cursor"] != nil {
		t.Fatalf("refresh: %d %v (a private channel alice is not in must not appear)", st, m)
	}

	// The write, as the app posts it: mark through the mention, then read
	// the whole channel.
	intents := fmt.Sprintf(`{"intents":[{"type":"mark_through","target":{"channel_id":%q},"message_id":%q},{"type":"mark_through","target":{"channel_id":%q},"message_id":%q}]}`,
		ch, m2.ID, other, m1.ID)
	st, h, m := v1(t, nil, r.HTTPURL, &alice, http.MethodPost, "/buzz/v1/me/read-state", "", []byte(intents))
	if st != http.StatusOK || h.Get("Cache-Control") != "private, no-store" || m["projection_status"] != "not_requested" {
		t.Fatalf("write: %d %v", st, m)
	}
	if o := m["outcomes"].([]any); fmt.Sprint(o) != "[map[status:applied] map[status:blocked]]" {
		t.Fatalf("outcomes %v", o)
	}
	if chs := m["channels"].([]any); len(chs) != 1 || countOf(desktopRow(t, chs[0]), "unread") != "exact 0" {
		t.Fatalf("refreshed rows %v", m["channels"])
	}
	// Contexts, as the app asks them.
	targets, _ := json.Marshal([]map[string]any{{"target": map[string]string{"channel_id": ch}, "message_ids": []string{m1.ID, m2.ID}}})
	st, _, m = v1(t, nil, r.HTTPURL, &alice, http.MethodGet, "/buzz/v1/me/read-state?"+url.Values{"targets": {string(targets)}}.Encode(), "", nil)
	if st != http.StatusOK || fmt.Sprint(m["contexts"]) != fmt.Sprintf("[map[messages:[map[message_id:%s status:read] map[message_id:%s status:read]] status:available]]", m1.ID, m2.ID) {
		t.Fatalf("contexts: %d %v", st, m)
	}

	// The relay's 40099 rows for this channel, signed by its key (NIP-11 self).
	sub, err := arl.Subscribe(ctxT(t), nostr.Filters{{Kinds: []int{40099}, Tags: nostr.TagMap{"h": {ch}}}})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for done := false; !done; {
		select {
		case ev := <-sub.Events:
			if ev.PubKey != doc.Self {
				t.Fatalf("a 40099 by %s", ev.PubKey)
			}
			var c map[string]string
			_ = json.Unmarshal([]byte(ev.Content), &c)
			types = append(types, c["type"]+":"+c["actor"][:8])
		case <-sub.EndOfStoredEvents:
			done = true
		case <-time.After(wait):
			t.Fatal("no EOSE")
		}
	}
	slices.Sort(types)
	if want := []string{"channel_created:" + owner.Pub[:8], "member_joined:" + alice.Pub[:8]}; !slices.Equal(types, want) {
		t.Fatalf("system rows %v, want %v", types, want)
	}
	// A member's forged system row is refused (issue 51).
	forged := signed(t, alice, 40099, nostr.Tags{{"h", ch}}, `{"type":"channel_archived","actor":"`+owner.Pub+`"}`)
	if err := arl.Publish(ctxT(t), forged); err == nil || !strings.Contains(err.Error(), "restricted:") {
		t.Fatalf("a forged 40099: %v", err)
	}

	// Archive: the row says so, writes are refused, reads go on.
	publish(t, orl, owner, 9002, nostr.Tags{{"h", ch}, {"archived", "true"}}, "")
	if err := arl.Publish(ctxT(t), signed(t, alice, 9, nostr.Tags{{"h", ch}}, "after")); err == nil || !strings.Contains(err.Error(), "invalid: channel "+ch+" is archived") {
		t.Fatalf("a message to an archived channel: %v", err)
	}
	if rows, _ := sidebarPage(t, r, alice, ""); rows[ch]["archived"] != true {
		t.Fatal("the sidebar row says archived")
	}
	if evs := newBridge(t, r, alice).query(map[string]any{"kinds": []int{9}, "#h": []string{ch}}); len(evs) < 1 {
		t.Fatal("an archived channel's messages are still read")
	}
	if evs := newBridge(t, r, alice).query(map[string]any{"kinds": []int{39000}, "#d": []string{ch}}); len(evs) != 1 || evs[0].Tags.GetFirst([]string{"archived", "true"}) == nil {
		t.Fatalf("39000 of an archived channel: %v", evs)
	}
}

// The attacks on each /buzz/v1 route: no token, a token for another URL or
// method, a replayed token, a stranger, a private channel the key is not
// in, another community's key, a banned key, 30 keys at once, bad input.
func TestBuzzSidebarAttacks(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	owner, orl := loggedIn(t, r)
	alice, arl := loggedIn(t, r)
	stranger := testkit.NewKey(t)
	priv := testkit.ChannelID()
	publish(t, orl, owner, 9007, nostr.Tags{{"h", priv}, {"name", "secret"}, {"visibility", "private"}}, "")
	secret := publish(t, orl, owner, 9, nostr.Tags{{"h", priv}}, "secret")
	open := testkit.ChannelID()
	publish(t, orl, owner, 9007, nostr.Tags{{"h", open}, {"name", "open"}, {"visibility", "open"}}, "")
	publish(t, arl, alice, 9021, nostr.Tags{{"h", open}}, "")
	publish(t, orl, owner, 9, nostr.Tags{{"h", open}}, "hello")

	routes := []struct{ method, path string }{
		{http.MethodGet, "/buzz/v1/me/sidebar?limit=20"},
		{http.MethodGet, "/buzz/v1/me/read-state?" + url.Values{"targets": {`[{"target":{"channel_id":"` + priv + `"},"message_ids":["` + secret.ID + `"]}]`}}.Encode()},
		{http.MethodPost, "/buzz/v1/me/read-state"},
	}
	markSecret := []byte(fmt.Sprintf(`{"intents":[{"type":"mark_channel_read","channel_id":%q,"message_id":%q}]}`, priv, secret.ID))
	body := func(method string) []byte {
		if method == http.MethodPost {
			return markSecret
		}
		return nil
	}
	for _, rt := range routes {
		// No token; a token for another path; for another method.
		if st, _, m := v1(t, nil, r.HTTPURL, nil, rt.method, rt.path, "", body(rt.method)); st != http.StatusUnauthorized || m["error"].(map[string]any)["code"] != "unauthorized" {
			t.Errorf("%s %s without a token: %d %v", rt.method, rt.path, st, m)
		}
		if st, _, _ := v1(t, nil, r.HTTPURL, &alice, rt.method, rt.path, r.HTTPURL+"/query", body(rt.method)); st != http.StatusUnauthorized {
			t.Errorf("%s %s with a token for /query: %d", rt.method, rt.path, st)
		}
		// A stranger (no channel) and alice (not in the private channel):
		// nothing of the private channel, whatever the route.
		for _, u := range []user{stranger, alice} {
			st, _, m := v1(t, nil, r.HTTPURL, &u, rt.method, rt.path, "", body(rt.method))
			js, _ := json.Marshal(m)
			if st != http.StatusOK || strings.Contains(string(js), priv) || strings.Contains(string(js), "secret") {
				t.Errorf("%s %s by a non-member: %d %s", rt.method, rt.path, st, js)
			}
			if rt.method == http.MethodPost && fmt.Sprint(m["outcomes"]) != "[map[status:blocked]]" {
				t.Errorf("a non-member's mark of a private channel: %v", m["outcomes"])
			}
			if rt.method == http.MethodGet && strings.Contains(rt.path, "read-state") && fmt.Sprint(m["contexts"]) != "[map[status:unavailable]]" {
				t.Errorf("a non-member's context of a private channel: %v", m["contexts"])
			}
		}
	}
	// A replayed token is refused.
	path := "/buzz/v1/me/sidebar?limit=20"
	tok := alice.Token(t, http.MethodGet, r.HTTPURL+path, nil, time.Now())
	for i, want := range []int{http.StatusOK, http.StatusUnauthorized} {
		req, _ := http.NewRequest(http.MethodGet, r.HTTPURL+path, nil)
		req.Header.Set("Authorization", tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("use %d of one token: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	// Bad input: Buzz's 400 invalid_request.
	for _, p := range []string{"/buzz/v1/me/sidebar?limit=0", "/buzz/v1/me/sidebar?page=2", "/buzz/v1/me/sidebar?cursor=x",
		"/buzz/v1/me/read-state?targets=%5B%5D", "/buzz/v1/me/read-state?targets=nope"} {
		if st, _, m := v1(t, nil, r.HTTPURL, &alice, http.MethodGet, p, "", nil); st != http.StatusBadRequest || m["error"].(map[string]any)["code"] != "invalid_request" {
			t.Errorf("%s: %d %v", p, st, m)
		}
	}
	for _, b := range []string{`{"intents":[]}`, `{"intents":"x"}`, `{"intents":[{}],"x":1}`, strings.Repeat(" ", 70_000)} {
		if st, _, _ := v1(t, nil, r.HTTPURL, &alice, http.MethodPost, "/buzz/v1/me/read-state", "", []byte(b)); st != http.StatusBadRequest {
			t.Errorf("POST %.30q: %d", b, st)
		}
	}
	// One key's marks are its own: bob's write leaves alice's count.
	bob, brl := loggedIn(t, r)
	publish(t, brl, bob, 9021, nostr.Tags{{"h", open}}, "")
	rows, _ := sidebarPage(t, r, alice, "")
	before := countOf(rows[open], "unread")
	latest := rows[open]["latest_message_id"].(string)
	if st, _, m := v1(t, nil, r.HTTPURL, &bob, http.MethodPost, "/buzz/v1/me/read-state", "",
		[]byte(fmt.Sprintf(`{"intents":[{"type":"mark_channel_read","channel_id":%q,"message_id":%q}]}`, open, latest))); st != http.StatusOK || fmt.Sprint(m["outcomes"]) != "[map[status:applied]]" {
		t.Fatalf("bob's mark: %d %v", st, m)
	}
	if rows, _ := sidebarPage(t, r, alice, ""); countOf(rows[open], "unread") != before || before != "exact 1" {
		t.Fatalf("alice's unread %s after bob's mark (was %s)", countOf(rows[open], "unread"), before)
	}

	// 30 keys at once: every one answered, no 5xx.
	var wg sync.WaitGroup
	statuses := make([]int, 30)
	for i := range statuses {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			k := testkit.NewKey(t)
			statuses[i], _, _ = v1(t, nil, r.HTTPURL, &k, http.MethodGet, path, "", nil)
		}(i)
	}
	wg.Wait()
	for i, st := range statuses {
		if st != http.StatusOK && st != http.StatusTooManyRequests {
			t.Errorf("request %d of 30: %d", i, st)
		}
	}

	// A banned key: 403 forbidden on every route.
	op := testkit.NewKey(t)
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	if st, _ := newBridge(t, r, op).rpc("banpubkey", alice.Pub, "spam"); st != http.StatusOK {
		t.Fatal("ban")
	}
	for _, rt := range routes {
		if st, _, m := v1(t, nil, r.HTTPURL, &alice, rt.method, rt.path, "", body(rt.method)); st != http.StatusForbidden || m["error"].(map[string]any)["code"] != "forbidden" {
			t.Errorf("%s %s by a banned key: %d %v", rt.method, rt.path, st, m)
		}
	}

	// Another community (last: a registered hostname ends the default
	// community's serving every host): its keys see nothing of this one;
	// a token for one host does not pass on another.
	opB := testkit.NewKey(t)
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees", Operators: []string{opB.Pub}}); err != nil {
		t.Fatal(err)
	}
	b := onHost(t, r, "b.test")
	if st, _, m := v1(t, b.hc, b.base(), &alice, http.MethodGet, path, "", nil); st != http.StatusOK || len(m["channels"].([]any)) != 0 {
		t.Errorf("alice on another community: %d %v", st, m)
	}
	if st, _, _ := v1(t, b.hc, b.base(), &alice, http.MethodGet, path, r.HTTPURL+path, nil); st != http.StatusUnauthorized {
		t.Errorf("a token for the default host on b.test: %d", st)
	}

}

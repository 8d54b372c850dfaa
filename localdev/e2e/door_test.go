package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// One door for every request (shared/service/guard): the rules below
// used to differ by the door a request came through.

const notServed = "restricted: no community is served at this host"

// TestDisabledCommunityRefusedOverWebSocket: a community disabled by the
// operator command (no instance is told) is refused over WebSocket within
// the registry's TTL, as over HTTP: on a socket that was open and
// authenticated before the disable, on one whose host the sessions' S3
// state still names, and on a new one; nothing is stored.
func TestDisabledCommunityRefusedOverWebSocket(t *testing.T) {
	r := StartTest(t, Options{})
	ctx := ctxT(t)
	bob := testkit.NewKey(t)
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}}); err != nil {
		t.Fatal(err)
	}
	b := onHost(t, r, "b.test")
	open, ok := b.authed(bob, "ws://"+b.host)
	if !ok {
		t.Fatal("AUTH on b.test refused")
	}
	ch := createChannelID()
	open.sendJSON([]any{"EVENT", signed(t, bob, 9007, nostr.Tags{{"h", ch}, {"name", "hive"}, {"visibility", "open"}}, "")})
	if ok := open.expect("OK"); string(ok[2]) != "true" {
		t.Fatalf("9007 before the disable: %s", joinRaw(ok))
	}
	second, ok := b.authed(bob, "ws://"+b.host) // records b.test in the sessions' S3 state
	if !ok {
		t.Fatal("second AUTH on b.test refused")
	}

	if err := community.Disable(ctx, r.App.Store, "bees", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	time.Sleep(community.DefaultTTL + 500*time.Millisecond) // the bound, on every door

	if st, _ := b.info(); st != http.StatusNotFound {
		t.Fatalf("HTTP after the disable: %d, want 404", st)
	}
	late := signed(t, bob, 9, nostr.Tags{{"h", ch}}, "after the disable")
	open.sendJSON([]any{"EVENT", late})
	if ok := open.expect("OK"); string(ok[2]) != "false" || str(t, ok[3]) != notServed {
		t.Fatalf("EVENT on a socket opened before the disable: %s", joinRaw(ok))
	}
	for i, rc := range []*rawConn{open, second} {
		for _, verb := range []string{"REQ", "COUNT"} {
			rc.sendJSON([]any{verb, "s", map[string]any{"kinds": []int{9}, "#h": []string{ch}}})
			if c := rc.expect("CLOSED"); str(t, c[2]) != notServed {
				t.Fatalf("socket %d, %s after the disable: %s", i+1, verb, joinRaw(c))
			}
		}
	}
	if !b.socketRefused(r) {
		t.Fatal("a new socket of the disabled community was served")
	}
	if err := community.Enable(ctx, r.App.Store, "bees", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	r.ForgetCommunities()
	if n := b.count(bob, map[string]any{"ids": []string{late.ID}}); n != 0 {
		t.Fatal("the event sent while the community was disabled was stored")
	}
}

// uploadBanned sets up a member whose media standing a moderator changes:
// an operator's and bob's bridges, bob a channel's creator (so a member
// who may upload).
func uploadBanned(t *testing.T) (*Relay, *bridge, user) {
	t.Helper()
	r := StartTest(t, Options{Media: true})
	op, bob := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddOperator(ctxT(t), r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	newChannel(t, newBridge(t, r, bob), "open")
	return r, newBridge(t, r, op), bob
}

// TestExpiredBanLetsKeyUpload: a moderator's 9040 with an expiration
// blocks the key's uploads until it expires, then no longer does (as for
// its posts); media used to keep the ban for good.
func TestExpiredBanLetsKeyUpload(t *testing.T) {
	r, bo, bob := uploadBanned(t)
	bo.accept(signed(t, bo.u, 9040, nostr.Tags{{"p", bob.Pub}, {"expiration", fmt.Sprint(time.Now().Unix() + 2)}}, ""))
	if st, reason := upload(t, r, bob, []byte("during the ban")); st != http.StatusForbidden || !strings.HasPrefix(reason, "blocked:") {
		t.Fatalf("upload during the ban: %d %q", st, reason)
	}
	time.Sleep(3 * time.Second)
	if st, reason := upload(t, r, bob, []byte("after the ban")); st != http.StatusCreated {
		t.Fatalf("upload after the ban expired: %d %q, want 201", st, reason)
	}
}

// TestTimeoutBlocksUpload: a key a moderator timed out (9042) cannot
// upload until the timeout expires, as it cannot post; media used to let
// it.
func TestTimeoutBlocksUpload(t *testing.T) {
	r, bo, bob := uploadBanned(t)
	bo.accept(signed(t, bo.u, 9042, nostr.Tags{{"p", bob.Pub}, {"expiration", fmt.Sprint(time.Now().Unix() + 3600)}}, ""))
	const timedOut = "blocked: this pubkey is timed out in this community until the timeout expires"
	if st, reason := upload(t, r, bob, []byte("during the timeout")); st != http.StatusForbidden || reason != timedOut {
		t.Fatalf("upload during the timeout: %d %q, want 403 %q", st, reason, timedOut)
	}
	bo.accept(signed(t, bo.u, 9043, nostr.Tags{{"p", bob.Pub}}, ""))
	if st, reason := upload(t, r, bob, []byte("after the timeout")); st != http.StatusCreated {
		t.Fatalf("upload after the timeout was lifted: %d %q", st, reason)
	}
}

// TestRemovedMemberStopsReceivingLiveEvents: in a community that enforces
// NIP-43 membership, live delivery asks the gate again: a member removed
// by 9031 receives no further event even when a subscription of theirs
// outlived the removal (stored again after it, as a fold that collected
// the member's pending REQ before the removal, or a REQ met by an
// instance whose cached flag was stale, does), and that subscription ends
// with CLOSED restricted:.
func TestRemovedMemberStopsReceivingLiveEvents(t *testing.T) {
	r := newRelay(t)
	c := ctxT(t)
	op, alice := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddOperator(c, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	bo := newBridge(t, r, op)
	ch := newChannel(t, bo, "open")
	if st, m := bo.rpc("setrelaymembership", true); st != http.StatusOK {
		t.Fatalf("setrelaymembership: %d %v", st, m)
	}
	r.ForgetCommunities()
	bo.accept(signed(t, op, 9030, nostr.Tags{{"p", alice.Pub}}, ""))

	rc := authedRaw(t, r, alice)
	filter := map[string]any{"kinds": []int{9}, "#h": []string{ch}}
	if ids := reqIDs(t, rc, "s", filter); len(ids) != 0 {
		t.Fatalf("stored events: %v", ids)
	}
	first := signed(t, op, 9, nostr.Tags{{"h", ch}}, "while a member")
	bo.accept(first)
	if ev := rc.expect("EVENT"); !strings.Contains(string(ev[2]), first.ID) {
		t.Fatalf("the member's live event: %s", joinRaw(ev))
	}

	bo.accept(signed(t, op, 9031, nostr.Tags{{"p", alice.Pub}}, ""))
	var conn string // alice's connection, as the sessions know it
	for _, id := range r.WS.Connections() {
		if s, err := r.App.Sessions.Get(c, id); err == nil && s.Pubkey == alice.Pub {
			conn = id
		}
	}
	if conn == "" {
		t.Fatal("alice's connection is not in the sessions")
	}
	var nf []nostr.Filter
	raw, _ := json.Marshal([]any{filter})
	_ = json.Unmarshal(raw, &nf)
	if err := r.App.Sessions.Subscribe(c, "default", conn, "s", alice.Pub, nf, sessions.DefaultLimits); err != nil {
		t.Fatal(err)
	}

	after := signed(t, op, 9, nostr.Tags{{"h", ch}}, "after the removal")
	bo.accept(after)
	for {
		parts := rc.read()
		switch str(t, parts[0]) {
		case "EVENT":
			if strings.Contains(string(parts[2]), after.ID) {
				t.Fatal("the removed member received a live event")
			}
			continue // the relay-signed 8001 and 13534 do not match #h
		case "CLOSED":
			if str(t, parts[1]) != "s" || str(t, parts[2]) != "restricted: not a relay member" {
				t.Fatalf("CLOSED: %s", joinRaw(parts))
			}
		default:
			t.Fatalf("unexpected %s", joinRaw(parts))
		}
		break
	}
}

// TestReportQueuePagedOverNIP86: listeventsneedingmoderation answers a
// bounded page of the open reports, oldest first ([limit, after]), and an
// operator pages through the whole queue with the last item's "report";
// the queue is never one unbounded answer.
func TestReportQueuePagedOverNIP86(t *testing.T) {
	r := newRelay(t)
	op := testkit.NewKey(t)
	if err := community.AddOperator(ctxT(t), r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	alice := testkit.NewKey(t)
	ba, bo := newBridge(t, r, alice), newBridge(t, r, op)
	ch := newChannel(t, ba, "open")
	post := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "reported")
	ba.accept(post)
	const n = 5
	filed := map[string]bool{}
	for i := 0; i < n; i++ {
		rep := signed(t, alice, 1984, nostr.Tags{{"e", post.ID, "spam"}, {"p", alice.Pub}}, fmt.Sprint("report ", i))
		ba.accept(rep)
		filed[rep.ID] = true
	}
	seen := map[string]bool{}
	var after any
	for pages := 0; len(seen) < n; pages++ {
		if pages > n {
			t.Fatalf("paging does not end: %d of %d reports seen", len(seen), n)
		}
		st, m := bo.rpc("listeventsneedingmoderation", 2, after)
		items, _ := m["result"].([]any)
		if st != http.StatusOK || len(items) == 0 || len(items) > 2 {
			t.Fatalf("page %d: %d, %d items (limit 2): %v", pages+1, st, len(items), m)
		}
		for _, it := range items {
			id, _ := it.(map[string]any)["report"].(string)
			if !filed[id] || seen[id] {
				t.Fatalf("page %d: report %q not filed or seen twice", pages+1, id)
			}
			seen[id] = true
			after = id
		}
	}
	if st, m := bo.rpc("listeventsneedingmoderation", 2, after); st != http.StatusOK || js(m["result"]) != "[]" {
		t.Fatalf("after the last report: %d %v, want an empty page", st, m)
	}
	if st, _ := bo.rpc("listeventsneedingmoderation", 100000); st != http.StatusBadRequest {
		t.Fatalf("a limit above the page bound: %d, want 400", st)
	}
}

// TestNIP86DisableForgetsTheSessionsHostEntry: after NIP-86's
// disablecommunity a new WebSocket connection to one of the community's
// hostnames is refused (within the community registry's TTL), though a
// connection there authenticated just before: no record of the host
// outlives the disable.
func TestNIP86DisableForgetsTheSessionsHostEntry(t *testing.T) {
	r := StartTest(t, Options{})
	ctx := ctxT(t)
	op, bob := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}}); err != nil {
		t.Fatal(err)
	}
	a, b := onHost(t, r, "a.test"), onHost(t, r, "b.test")
	if _, ok := b.authed(bob, "ws://"+b.host); !ok {
		t.Fatal("AUTH on b.test refused")
	}
	if st, m := a.rpc(op, "disablecommunity", "bees"); st != http.StatusOK {
		t.Fatalf("disablecommunity: %d %v", st, m)
	}
	r.ForgetCommunities()
	if !b.socketRefused(r) {
		t.Fatal("a new socket of the disabled community was served")
	}
}

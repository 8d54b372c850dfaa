package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// idleRelay is a relay whose sessions keep their idle state in the local
// S3 server (Options.Sessions), with a client of that bucket.
func idleRelay(t *testing.T) (*Relay, *s3blobs.Bucket) {
	t.Helper()
	r := StartTest(t, Options{Sessions: true})
	b, err := s3blobs.Open(ctxT(t), "us-east-1", MediaBucket, r.S3URL)
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

// authRaw opens a raw connection as u the way a reconnecting client does:
// its first message a REQ (refused auth-required:; the challenge, pushed
// at connect, comes again with the refusal, the same string), then AUTH.
func authRaw(t *testing.T, r *Relay, u user) *rawConn {
	t.Helper()
	rc := dialRaw(t, r)
	rc.send(`["REQ","first",{"kinds":[9]}]`)
	if parts := rc.expect("CLOSED"); !strings.HasPrefix(str(t, parts[2]), "auth-required:") {
		t.Fatalf("REQ before AUTH: %s", joinRaw(parts))
	}
	rc.auth(r, u, rc.challenge)
	return rc
}

// reqAll sends a REQ and returns the ids of the events before its EOSE.
func (rc *rawConn) reqAll(sub string, filter map[string]any) []string {
	rc.t.Helper()
	rc.sendJSON([]any{"REQ", sub, filter})
	var ids []string
	for {
		parts := rc.read()
		switch str(rc.t, parts[0]) {
		case "EVENT":
			var ev nostr.Event
			if err := json.Unmarshal(parts[2], &ev); err != nil {
				rc.t.Fatal(err)
			}
			ids = append(ids, ev.ID)
		case "EOSE":
			return ids
		default:
			rc.t.Fatalf("REQ %s: %s", sub, joinRaw(parts))
		}
	}
}

// eventually polls done until it holds, failing t with what after wait.
func eventually(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitKey waits until the bucket holds a key under prefix.
func waitKey(t *testing.T, b *s3blobs.Bucket, prefix string) {
	t.Helper()
	eventually(t, "nothing under "+prefix, func() bool {
		keys, err := b.List(ctxT(t), prefix, 1)
		if err != nil {
			t.Fatal(err)
		}
		return len(keys) > 0
	})
}

// foldPrefix is where the relay's community keeps what its next write
// folds (sessions.Idle's layout).
func foldPrefix(r *Relay) string {
	return "sessions/" + sessions.FoldDir + base64.RawURLEncoding.EncodeToString([]byte(r.App.Config.DefaultCommunity)) + "/"
}

// reqAnswer sends a REQ and returns its answer: "EOSE" (no event may come
// first), or CLOSED's reason.
func (rc *rawConn) reqAnswer(sub string, filter map[string]any) string {
	rc.t.Helper()
	rc.sendJSON([]any{"REQ", sub, filter})
	return rc.answer(sub)
}

// answer reads the answer to REQ sub: "EOSE", or CLOSED's reason.
func (rc *rawConn) answer(sub string) string {
	rc.t.Helper()
	parts := rc.read()
	switch verb := str(rc.t, parts[0]); {
	case verb == "EOSE" && (sub == "" || str(rc.t, parts[1]) == sub):
		return "EOSE"
	case verb == "CLOSED" && len(parts) == 3 && (sub == "" || str(rc.t, parts[1]) == sub):
		return str(rc.t, parts[2])
	default:
		rc.t.Fatalf("REQ %s: %s", sub, joinRaw(parts))
		return ""
	}
}

// TestIdleREQFloodCannotStallAnotherKeysWrite: REQs answered from the
// last-commit mark (every since after the last event, no database) are
// held pending in S3 until the community's next write folds them. One key
// flooding them gets at most relayinfo.MaxSubscriptions per connection
// (then CLOSED restricted:, as on the database path) and
// relayinfo.MaxIdleSubscriptionsPerKey across its connections (then
// CLOSED rate-limited:), sequentially or in one burst; so another key's
// write folds a bounded number of objects, and folds them all (each is a
// live subscription after it), leaving none behind.
func TestIdleREQFloodCannotStallAnotherKeysWrite(t *testing.T) {
	r, bucket := idleRelay(t)
	alice, mallory, eve := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "open") // the community's first write: its mark
	// A since just after the last event: the next write must fold them
	// (far-future ones it leaves pending without fetching them).
	from := time.Now().Unix() + 1
	future := map[string]any{"kinds": []int{9}, "since": from}
	perConn, perKey := relayinfo.MaxSubscriptions, relayinfo.MaxIdleSubscriptionsPerKey
	prefixOf := func(reason string) string { p, _, _ := strings.Cut(reason, ":"); return p }

	// Sequentially: each connection's first perConn answered, then
	// restricted:; once the key holds perKey, rate-limited:.
	conns := perKey/perConn + 2
	for i := range conns {
		rc := authRaw(t, r, mallory)
		for j := range perConn + 5 {
			sub := fmt.Sprintf("c%d-%d", i, j)
			got := rc.reqAnswer(sub, future)
			want := "EOSE"
			switch {
			case i >= perKey/perConn:
				want = "rate-limited"
			case j >= perConn:
				want = "restricted"
			}
			if got != want && prefixOf(got) != want {
				t.Fatalf("connection %d, REQ %d: %q, want %s", i, j, got, want)
			}
		}
	}
	// In one burst on one connection: never more than its limit answered.
	burst := authRaw(t, r, eve)
	const n = 300
	for j := range n {
		burst.sendJSON([]any{"REQ", fmt.Sprintf("b%d", j), future})
	}
	answered := 0
	for range n {
		switch got := burst.answer(""); {
		case got == "EOSE":
			answered++
		case prefixOf(got) != "restricted" && prefixOf(got) != "rate-limited":
			t.Fatalf("burst: %q", got)
		}
	}
	if answered == 0 || answered > perConn {
		t.Fatalf("a burst of %d REQs: %d answered, want 1 to %d", n, answered, perConn)
	}

	// What the next write folds: the keys' limits, not their REQs.
	pending, err := bucket.List(ctxT(t), foldPrefix(r)+"p/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != perKey+answered {
		t.Fatalf("%d pending objects after %d REQs, want %d (the flooding key's limit) + %d", len(pending), conns*(perConn+5)+n, perKey, answered)
	}
	for time.Now().Unix() <= from {
		time.Sleep(50 * time.Millisecond)
	}
	ba.accept(signed(t, alice, 9, nostr.Tags{{"h", ch}}, "another key's write"))
	if left, err := bucket.List(ctxT(t), foldPrefix(r)+"p/", 0); err != nil || len(left) != 0 {
		t.Fatalf("after the write: %d pending objects left (%v)", len(left), err)
	}
	db := testkit.OpenDB(t, r.DSN)
	for key, want := range map[string]int{mallory.Pub: perKey, eve.Pub: answered} {
		var got int
		if err := db.QueryRow(ctxT(t), `SELECT count(*) FROM ws_subscriptions WHERE pubkey = $1`, key).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%d subscriptions of %.8s folded, want %d", got, key, want)
		}
	}
}

// TestIdleReconnectRunsNoStatement: with the sessions' idle state in S3,
// a $disconnect, and a reconnect (REQ before AUTH, AUTH, REQ with a since
// after the community's last commit) run no database statement, on the
// relay's own pool; the subscription so opened still gets the next commit
// live (folded into ws_subscriptions by that commit), a non-member's gets
// nothing of a private channel, and a REQ with an older since reads the
// stored events.
func TestIdleReconnectRunsNoStatement(t *testing.T) {
	if binaries != nil {
		// The count is of the serving pool's statements (Store.Statements),
		// which is in this process only when the handlers are: the
		// default-mode run of the suite in make test covers it.
		t.Skip("BUZZ_LAMBDA=processes: the statements counted are those of this process's serving pool, and here the functions' own processes serve; make test's default-mode pass of the suite runs this test")
	}
	r, bucket := idleRelay(t)
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "private")
	first := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "before the reconnect")
	ba.accept(first)

	// A first session resolves the host (recorded in the bucket), then
	// goes away.
	old := authRaw(t, r, alice)
	if ids := old.reqAll("warm", map[string]any{"kinds": []int{9}, "#h": []string{ch}}); len(ids) != 1 {
		t.Fatalf("stored events: %v", ids)
	}
	time.Sleep(1100 * time.Millisecond) // a since after the last commit's second
	before := r.App.Store.Statements()
	old.c.CloseNow()
	// The $disconnect's mark for the next write of the community.
	waitKey(t, bucket, foldPrefix(r)+"g/")
	if n := r.App.Store.Statements() - before; n != 0 {
		t.Fatalf("$disconnect ran %d statements", n)
	}

	since := time.Now().Unix()
	ra := authRaw(t, r, alice)
	rb := authRaw(t, r, bob)
	live := map[string]any{"kinds": []int{9}, "#h": []string{ch}, "since": since}
	if ids := ra.reqAll("live", live); len(ids) != 0 {
		t.Fatalf("alice: events after the last commit: %v", ids)
	}
	if ids := rb.reqAll("live", live); len(ids) != 0 {
		t.Fatalf("bob: events after the last commit: %v", ids)
	}
	if n := r.App.Store.Statements() - before; n != 0 {
		t.Fatalf("reconnect, AUTH and REQ since the last commit ran %d statements", n)
	}

	second := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "after the reconnect")
	ba.accept(second)
	got := ra.expect("EVENT")
	var ev nostr.Event
	if err := json.Unmarshal(got[2], &ev); err != nil || ev.ID != second.ID || str(t, got[1]) != "live" {
		t.Fatalf("live delivery: %s", joinRaw(got))
	}
	if r.App.Store.Statements() == before {
		t.Fatal("a commit ran no statement")
	}

	// Bob may not read the private channel: his subscription got nothing
	// (a REQ after it answers first if anything had been posted).
	if ids := rb.reqAll("probe", map[string]any{"kinds": []int{9}, "#h": []string{ch}}); len(ids) != 0 {
		t.Fatalf("bob read the private channel: %v", ids)
	}
	ids := ra.reqAll("older", map[string]any{"kinds": []int{9}, "#h": []string{ch}, "since": int64(first.CreatedAt) - 10})
	// Both, each once, before EOSE; their arrival order is not kept
	// (concurrent posts, docs/compatibility.md).
	slices.Sort(ids)
	want := []string{first.ID, second.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("REQ with an older since: %v, want %v", ids, want)
	}
}

// TestIdleStaleConnectionsSwept: a connection whose $disconnect never came
// (the relay crashed, the database was away) gets no delivery, and the
// next commit deletes its rows; so does it an expired one and one whose
// $disconnect was recorded in the bucket only.
func TestIdleStaleConnectionsSwept(t *testing.T) {
	r, _ := idleRelay(t)
	alice, carol, dave := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "open")
	ctx := ctxT(t)
	db := testkit.OpenDB(t, r.DSN)
	subscribed := func(u user) (*rawConn, string) {
		rc := authRaw(t, r, u)
		rc.reqAll("all", map[string]any{"kinds": []int{9}, "#h": []string{ch}}) // the database path
		var id string
		if err := db.QueryRow(ctx, `SELECT id FROM ws_connections WHERE pubkey = $1`, u.Pub).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return rc, id
	}
	_, crashed := subscribed(carol)
	left, closed := subscribed(dave)
	if !r.WS.Forget(crashed) {
		t.Fatalf("emulator does not know %s", crashed)
	}
	left.c.CloseNow()
	if _, err := db.Exec(ctx, `INSERT INTO ws_connections (id, community_id, relay_urls, challenge, pubkey, connected_at, expires_at)
SELECT 'expired', community_id, '{}', 'x', $1, 1, 2 FROM ws_connections WHERE id = $2`, carol.Pub, crashed); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the $disconnect of dave's socket
	var rows int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM ws_connections WHERE id = ANY($1)`, []string{crashed, closed, "expired"}).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("before the commit: %d rows (%v), want 3: $disconnect needs no database", rows, err)
	}
	ba.accept(signed(t, alice, 9, nostr.Tags{{"h", ch}}, "to the stale"))
	eventually(t, "stale connections left after a commit", func() bool {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM ws_connections WHERE id = ANY($1)`, []string{crashed, closed, "expired"}).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		return rows == 0
	})
}

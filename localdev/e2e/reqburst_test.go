package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// seedChannels loads n open channels of events each into r's database
// (testkit.SeedChannel: mostly kind 9 messages, with replies, reactions,
// edits and deletions) and returns their ids.
func seedChannels(t testing.TB, r *Relay, n, events int, sign bool) []string {
	t.Helper()
	ctx := context.Background()
	db, err := dbtest.Open(ctx, r.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	now := time.Now().Unix()
	chs := make([]string, n)
	for i := range chs {
		chs[i] = uuid.NewString()
		testkit.SeedChannel(t, db, testkit.SeedOptions{Channel: chs[i], Events: events, Start: now - int64(events), PerSecond: 2, Seed: uint64(i + 1), Sign: sign})
	}
	testkit.Analyze(t, db)
	return chs
}

// tenFilterREQ is the REQ: ten filters, no limit, each matching
// at least 1,000 stored events (kind 9 of one seeded channel each).
func tenFilterREQ(sub string, chs []string) []any {
	req := []any{"REQ", sub}
	for _, ch := range chs {
		req = append(req, map[string]any{"kinds": []int{9}, "#h": []string{ch}})
	}
	return req
}

// answer reads c until the EOSE of sub and returns the channel (#h) of
// each event of sub, or why it stopped (a CLOSED, a NOTICE, a closed
// socket).
func answer(ctx context.Context, c *websocket.Conn, sub string) ([]string, error) {
	var chans []string
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return chans, fmt.Errorf("after %d events: %w", len(chans), err)
		}
		var parts []json.RawMessage
		if err := json.Unmarshal(data, &parts); err != nil || len(parts) < 2 {
			return chans, fmt.Errorf("a non-array message %.200s", data)
		}
		var verb, id string
		_ = json.Unmarshal(parts[0], &verb)
		_ = json.Unmarshal(parts[1], &id)
		switch {
		case verb == "EVENT" && id == sub:
			var ev nostr.Event
			if err := json.Unmarshal(parts[2], &ev); err != nil {
				return chans, err
			}
			h := ev.Tags.GetFirst([]string{"h"})
			if h == nil {
				return chans, fmt.Errorf("event %s has no h tag", ev.ID)
			}
			chans = append(chans, (*h)[1])
		case verb == "EOSE" && id == sub:
			return chans, nil
		case verb == "CLOSED" || verb == "NOTICE":
			return chans, fmt.Errorf("after %d events: %.300s", len(chans), data)
		}
	}
}

// TestTenFilterREQEndsInEOSEOnALiveSocket (issue 51): the REQ, ten
// filters of 1,000 events and more each with no limit, is answered with
// relayinfo.MaxREQEvents events, each filter its share (100), paced, then
// EOSE, and the socket stays open: a later REQ is answered and a new event
// arrives live. Before, the relay posted all 10,000 at once and the client
// was dropped (1006) part way.
func TestTenFilterREQEndsInEOSEOnALiveSocket(t *testing.T) {
	t.Run("dynamodb", func(t *testing.T) {
		r := StartTest(t, Options{})
		chs := seedChannels(t, r, 10, 1500, false)
		alice := testkit.NewKey(t)
		rc := authRaw(t, r, alice)
		start := time.Now()
		rc.sendJSON(tenFilterREQ("ten", chs))
		chans, err := answer(ctxT(t), rc.c, "ten")
		if err != nil {
			t.Fatalf("the ten-filter REQ: %v", err)
		}
		elapsed := time.Since(start)
		if len(chans) != relayinfo.MaxREQEvents {
			t.Fatalf("%d events before EOSE, want %d", len(chans), relayinfo.MaxREQEvents)
		}
		per := map[string]int{}
		for _, ch := range chans {
			per[ch]++
		}
		for _, ch := range chs {
			if per[ch] != relayinfo.MaxREQEvents/len(chs) {
				t.Errorf("channel %s: %d events, want its share %d", ch, per[ch], relayinfo.MaxREQEvents/len(chs))
			}
		}
		// The socket is live: another REQ, then a new event live.
		rc.sendJSON([]any{"REQ", "live", map[string]any{"kinds": []int{9}, "#h": []string{chs[0]}, "limit": 0}})
		if parts := rc.read(); str(t, parts[0]) != "EOSE" {
			t.Fatalf("the next REQ: %s", joinRaw(parts))
		}
		ba := newBridge(t, r, alice)
		ch := newChannel(t, ba, "open")
		rc.sendJSON([]any{"REQ", "new", map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 0}})
		rc.expect("EOSE")
		ev := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "after the big answer")
		ba.accept(ev)
		if parts := rc.expect("EVENT"); !strings.Contains(string(parts[2]), ev.ID) {
			t.Fatalf("live: %s", joinRaw(parts))
		}
		t.Logf("10 filters x 1,000+ events: %d events and EOSE in %v", len(chans), elapsed)
	})
}

// TestREQAnswersUnderAttack (issue 51's attacks), with the sessions in
// DynamoDB as shipped:
//   - 30 connections send a ten-filter REQ at once: each gets its events
//     and EOSE, none is dropped;
//   - a client that never reads, asking again and again for large events
//     by id (one-shot, so no subscription limit stops it), is dropped by
//     API Gateway's outbound buffer (the emulator's, kept), while a reader
//     beside it is served throughout;
//   - one key opening four connections of 20 live subscriptions each
//     holds 60 (relayinfo.MaxSubscriptionsPerKey): the rest are refused at
//     once, rate-limited: (or restricted:), never stored.
func TestREQAnswersUnderAttack(t *testing.T) {
	r := StartTest(t, Options{})
	chs := seedChannels(t, r, 10, 1500, false)

	t.Run("30 connections at once", func(t *testing.T) {
		conns := make([]*rawConn, 30)
		for i := range conns {
			conns[i] = authRaw(t, r, testkit.NewKey(t))
		}
		// Each a ten-filter REQ of 30 events a filter: 9,000 posts at once,
		// what this 2-core machine's emulator posts in a few seconds (its
		// @connections serves two posts at a time, Management: Slots).
		req := tenFilterREQ("ten", chs)
		for _, f := range req[2:] {
			f.(map[string]any)["limit"] = 30
		}
		var wg sync.WaitGroup
		errs := make([]error, len(conns))
		got := make([]int, len(conns))
		start := time.Now()
		for i, rc := range conns {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				b, _ := json.Marshal(req)
				if errs[i] = rc.c.Write(ctx, websocket.MessageText, b); errs[i] != nil {
					return
				}
				var chans []string
				chans, errs[i] = answer(ctx, rc.c, "ten")
				got[i] = len(chans)
			})
		}
		wg.Wait()
		for i := range conns {
			if errs[i] != nil || got[i] != 300 {
				t.Errorf("connection %d: %d events, %v; want 300 and EOSE", i, got[i], errs[i])
			}
		}
		t.Logf("30 connections x 300 events: every EOSE within %v", time.Since(start))
	})

	t.Run("a client that never reads", func(t *testing.T) {
		alice := testkit.NewKey(t)
		ba := newBridge(t, r, alice)
		ch := newChannel(t, ba, "open")
		var ids []string
		for i := range 20 {
			ev := signed(t, alice, 9, nostr.Tags{{"h", ch}}, fmt.Sprintf("%d %s", i, strings.Repeat("x", 8_000)))
			ba.accept(ev)
			ids = append(ids, ev.ID)
		}
		// A socket with a small receive buffer that never reads, asking for
		// far more than its socket's and API Gateway's buffers hold.
		const stalledREQs = 300
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(4096)
			}
			return c, err
		}}
		c, _, err := websocket.Dial(ctxT(t), r.WSURL, &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadLimit(1 << 20)
		defer c.CloseNow()
		stalled := &rawConn{t: t, c: c}
		stalled.expect("AUTH")
		stalled.auth(r, alice, stalled.challenge)
		reader := authRaw(t, r, testkit.NewKey(t))
		for i := range stalledREQs {
			stalled.sendJSON([]any{"REQ", fmt.Sprintf("big%d", i), map[string]any{"ids": ids}})
		}
		// Served throughout: the reader's own big answer.
		reader.sendJSON(tenFilterREQ("ten", chs))
		rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
		defer rcancel()
		if chans, err := answer(rctx, reader.c, "ten"); err != nil || len(chans) != relayinfo.MaxREQEvents {
			t.Fatalf("the reader beside a stalled client: %d events, %v", len(chans), err)
		}
		// The stalled client is dropped: reading now finds its socket
		// closed before its answers all came.
		deadline := time.Now().Add(30 * time.Second)
		eoses := 0
		for {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			_, data, err := c.Read(ctx)
			timedOut := ctx.Err() != nil
			cancel()
			if err != nil {
				if timedOut {
					t.Fatalf("the client that never read was not dropped (%d EOSEs read)", eoses)
				}
				break
			}
			if strings.HasPrefix(string(data), `["EOSE"`) {
				eoses++
			}
		}
		if eoses >= stalledREQs {
			t.Fatalf("all %d answers reached a client that never read", eoses)
		}
		t.Logf("dropped after %d of %d answers", eoses, stalledREQs)
	})

	t.Run("one key on many connections", func(t *testing.T) {
		mallory := testkit.NewKey(t)
		conns := make([]*rawConn, 4)
		for i := range conns {
			conns[i] = authRaw(t, r, mallory)
		}
		for i, rc := range conns {
			for j := range relayinfo.MaxSubscriptions {
				rc.sendJSON([]any{"REQ", fmt.Sprintf("c%ds%d", i, j), map[string]any{"kinds": []int{9}, "authors": []string{mallory.Pub}, "limit": 0}})
			}
		}
		answered, refused := 0, 0
		for _, rc := range conns {
			for range relayinfo.MaxSubscriptions {
				parts := rc.read()
				switch verb := str(t, parts[0]); {
				case verb == "EOSE":
					answered++
				case verb == "CLOSED" && (strings.HasPrefix(str(t, parts[2]), "rate-limited:") || strings.HasPrefix(str(t, parts[2]), "restricted:")):
					refused++
				default:
					t.Fatalf("%s", joinRaw(parts))
				}
			}
		}
		if answered != relayinfo.MaxSubscriptionsPerKey || refused != 4*relayinfo.MaxSubscriptions-answered {
			t.Fatalf("%d answered, %d refused; want %d and the rest", answered, refused, relayinfo.MaxSubscriptionsPerKey)
		}
		if got := subsOf(t, r, mallory.Pub); got != relayinfo.MaxSubscriptionsPerKey {
			t.Fatalf("%d subscriptions stored, want %d", got, relayinfo.MaxSubscriptionsPerKey)
		}
	})
}

// TestSpaceSyncBurstsAreServed (issue 56): Flotilla's load of a space it
// holds nothing of, through welshman 0.8.15's own pull (a NIP-77
// reconciliation per filter, then the missing ids fetched 100 to a REQ,
// all at once, twice at once as a second tab does) over a space of 2,000
// events, and NDK 3.0.3's 40 one-shot fetches at once on one connection
// (nip29clients/reqburst.mjs): every event is fetched and the relay
// answers none of it restricted: or rate-limited: (welshman's access
// policy turns such answers into Flotilla's "Access Denied"). The id
// fetches are ids-only and the pages older than the write window end at
// EOSE, so neither counts against the live limit (relay.EndsAtEOSE); the
// newest pages are live until NDK CLOSEs them. Before, every REQ past 20
// on the connection was CLOSED restricted:. Sessions in DynamoDB, as
// shipped.
func TestSpaceSyncBurstsAreServed(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "space sync burst test", map[string]string{
		"@nostr-dev-kit/ndk": "3.0.3", "@welshman/net": "0.8.15", "@welshman/signer": "0.8.15",
		"@welshman/lib": "0.8.15", "@welshman/util": "0.8.15", "ws": "8.18.3",
	})
	r := StartTest(t, Options{})
	ch := seedChannels(t, r, 1, 2600, true)[0]
	ctx := context.Background()
	db, err := dbtest.Open(ctx, r.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	var want int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE channel_id = $1 AND kind IN (9, 7) AND deleted_at IS NULL`, ch).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if want < 2000 {
		t.Fatalf("the space holds %d events of kinds 9 and 7, want 2,000 or more", want)
	}
	u := testkit.NewKey(t)
	in, _ := json.Marshal(map[string]any{"channel": ch, "secret": u.Secret, "kinds": [][]int{{9}, {7}}, "until": time.Now().Unix()})
	path := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(path, in, 0o600); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Welshman struct{ Fetched, Reqs, NegOpens int }
		NDK      struct{ Fetched, Reqs int }
		Refusals []string
		Notices  []string
	}
	stderr := RunNode(t, node, dir, 90*time.Second, &got, "reqburst.mjs", r.WSURL, path)
	for _, x := range append(got.Refusals, got.Notices...) {
		t.Errorf("the relay answered %q", x)
	}
	if got.Welshman.Fetched != want {
		t.Errorf("welshman's pull fetched %d of the space's %d events (stderr %s)", got.Welshman.Fetched, want, stderr)
	}
	if got.Welshman.Reqs < 2*want/100 || got.Welshman.NegOpens < 4 {
		t.Errorf("welshman sent %d REQs and %d NEG-OPENs, want its 100-id burst (%d REQs) twice", got.Welshman.Reqs, got.Welshman.NegOpens, 2*want/100)
	}
	if got.NDK.Reqs < 40 || got.NDK.Fetched == 0 {
		t.Errorf("NDK: %d REQs, %d events fetched; want 40 one-shot REQs answered", got.NDK.Reqs, got.NDK.Fetched)
	}
	t.Logf("welshman: %d events in %d REQs after %d NEG-OPENs; NDK: %d REQs, %d events", got.Welshman.Fetched, got.Welshman.Reqs, got.Welshman.NegOpens, got.NDK.Reqs, got.NDK.Fetched)
}

// TestHistoryPagesEndAtEOSE (issue 56): a REQ that no later write can
// match (every filter's until older than the oldest created_at the relay
// still accepts) is answered and ended at EOSE, never counted against the
// live limits: on a connection already holding its 20 live
// subscriptions, 60 history pages sent at once and never CLOSEd are each
// answered with their events and EOSE, none refused, and none stored;
// a live REQ beside them is refused restricted: at once, quoting its id.
// Before, each page was a live subscription and every one past 20 was
// CLOSED restricted: (or waited inside its invocation for a CLOSE that
// never came). Both session stores.
func TestHistoryPagesEndAtEOSE(t *testing.T) {
	t.Run("dynamodb", func(t *testing.T) {
		r := StartTest(t, Options{})
		ctx := context.Background()
		db, err := dbtest.Open(ctx, r.DSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		ch := uuid.NewString()
		old := time.Now().Unix() - 3*relayinfo.CreatedAtWindow
		testkit.SeedChannel(t, db, testkit.SeedOptions{Channel: ch, Events: 400, Start: old, PerSecond: 2, Seed: 7})
		u := testkit.NewKey(t)
		rc := authRaw(t, r, u)
		for i := range relayinfo.MaxSubscriptions {
			if got := rc.reqAnswer(fmt.Sprintf("live%d", i), map[string]any{"kinds": []int{9}, "authors": []string{u.Pub}, "limit": 0}); got != "EOSE" {
				t.Fatalf("live REQ %d: %q", i, got)
			}
		}
		const pages = 60
		for i := range pages {
			rc.sendJSON([]any{"REQ", fmt.Sprintf("page%d", i), map[string]any{"kinds": []int{9}, "#h": []string{ch}, "until": old + 200 - int64(i), "limit": 3}})
		}
		eose, events := map[string]bool{}, 0
		for len(eose) < pages {
			parts := rc.read()
			switch verb := str(t, parts[0]); verb {
			case "EVENT":
				events++
			case "EOSE":
				eose[str(t, parts[1])] = true
			default:
				t.Fatalf("a history page: %s", joinRaw(parts))
			}
		}
		if events < pages {
			t.Fatalf("%d events for %d pages of 3", events, pages)
		}
		if got := subsOf(t, r, u.Pub); got != relayinfo.MaxSubscriptions {
			t.Fatalf("%d subscriptions stored, want the %d live ones", got, relayinfo.MaxSubscriptions)
		}
		got := rc.reqAnswer("one-more-live", map[string]any{"kinds": []int{9}, "authors": []string{u.Pub}, "limit": 0})
		if !strings.HasPrefix(got, "restricted:") || !strings.Contains(got, `"one-more-live"`) {
			t.Fatalf("a live REQ past the limit: %q", got)
		}
	})
}

// TestLargeEventsStayDeliverable (issue 56): an event that no WebSocket
// message could deliver to every subscriber (over relayinfo.MaxEventBytes
// as JSON) is refused invalid: over WebSocket and over POST /events, so
// every new event reaches WebSocket readers; one stored before the limit
// (made here by growing a stored row's raw JSON) is left out of a REQ's
// answer, never cut, and a NOTICE names its id, then EOSE, on a live
// socket that goes on answering.
func TestLargeEventsStayDeliverable(t *testing.T) {
	r := StartTest(t, Options{})
	alice := testkit.NewKey(t)
	ba := newBridge(t, r, alice)
	ch := newChannel(t, ba, "open")
	rc := authRaw(t, r, alice)

	// Content within its own limit, the tags past the event's.
	big := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"alt", strings.Repeat("y", 8000)}}, strings.Repeat("x", relayinfo.MaxContentLength))
	if a := ba.submit(big); a.Accepted || !strings.HasPrefix(a.Message, "invalid: the event takes") {
		t.Fatalf("POST /events of a %d-byte event: %+v", len(big.String()), a)
	}
	// Just past the limit, its EVENT message still within one frame.
	probe := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"alt", ""}}, strings.Repeat("x", relayinfo.MaxContentLength))
	probeRaw, _ := json.Marshal(probe)
	near := signed(t, alice, 9, nostr.Tags{{"h", ch}, {"alt", strings.Repeat("y", relayinfo.MaxEventBytes+20-len(probeRaw))}}, strings.Repeat("x", relayinfo.MaxContentLength))
	if nearRaw, _ := json.Marshal(near); len(nearRaw) <= relayinfo.MaxEventBytes || len(nearRaw)+len(`["EVENT",]`) > relayinfo.MaxMessageLength {
		t.Fatalf("the probe event is %d bytes", len(nearRaw))
	}
	rc.sendJSON([]any{"EVENT", near})
	if parts := rc.expect("OK"); str(t, parts[1]) != near.ID || string(parts[2]) != "false" || !strings.HasPrefix(str(t, parts[3]), "invalid: the event takes") {
		t.Fatalf("EVENT over WebSocket of a %d-byte event: %s", len(near.String()), joinRaw(parts))
	}

	// One stored before the limit.
	small := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "soon large")
	ba.accept(small)
	ctx := context.Background()
	db, err := dbtest.Open(ctx, r.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	grown := small
	grown.Content = strings.Repeat("z", relayinfo.MaxMessageLength)
	raw, _ := json.Marshal(grown)
	if _, err := db.Pool.Exec(ctx, `UPDATE events SET raw = $1 WHERE id = $2`, string(raw), small.ID); err != nil {
		t.Fatal(err)
	}
	rc.sendJSON([]any{"REQ", "all", map[string]any{"kinds": []int{9}, "#h": []string{ch}}})
	noticed := false
	for {
		parts := rc.read()
		verb := str(t, parts[0])
		if verb == "NOTICE" {
			if !strings.Contains(str(t, parts[1]), small.ID) || !strings.Contains(str(t, parts[1]), "never cut") {
				t.Fatalf("NOTICE: %s", joinRaw(parts))
			}
			noticed = true
			continue
		}
		if verb == "EVENT" && strings.Contains(string(parts[2]), small.ID) {
			t.Fatalf("the large event was sent (%d bytes)", len(parts[2]))
		}
		if verb == "EOSE" {
			break
		}
	}
	if !noticed {
		t.Fatal("no NOTICE named the event left out")
	}
	if got := rc.reqAnswer("after", map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 0}); got != "EOSE" {
		t.Fatalf("the socket after: %q", got)
	}
}

// TestConnectionMessageLimitIsOneRule (issue 54): a connection's message
// limit counts a channel owner as any key, whichever store keeps the
// sessions (before, Postgres exempted owners and DynamoDB did not, so the
// same client got rate-limited: in one and nothing in the other).
func TestConnectionMessageLimitIsOneRule(t *testing.T) {
	t.Run("dynamodb", func(t *testing.T) {
		const limit = 20
		r := StartTest(t, Options{Env: map[string]string{"RATE_WS_MESSAGES_PER_MIN": fmt.Sprint(limit)}})
		freshWindow()
		owner := testkit.NewKey(t)
		ch := newChannel(t, newBridge(t, r, owner), "open")
		// One counted message: AUTH, on the pushed challenge (a REQ
		// before AUTH would count too where the database counts: the
		// rule counts messages before authentication is asked for).
		rc := dialRaw(t, r)
		rc.auth(r, owner, rc.challenge)
		const n = limit + 5
		for i := range n {
			rc.sendJSON([]any{"COUNT", fmt.Sprintf("n%d", i), map[string]any{"kinds": []int{9}, "#h": []string{ch}}})
		}
		refused := 0
		for range n {
			parts := rc.read()
			switch verb := str(t, parts[0]); {
			case verb == "COUNT":
			case verb == "CLOSED" && strings.HasPrefix(str(t, parts[2]), "rate-limited:"):
				refused++
			default:
				t.Fatalf("%s", joinRaw(parts))
			}
		}
		if want := n + 1 - limit; refused != want {
			t.Fatalf("the channel owner's %d COUNTs past a limit of %d: %d refused rate-limited:, want %d", n, limit, refused, want)
		}
	})
}

// BenchmarkTenFilterREQToEOSE times the issue 51 REQ (ten filters of 1,000
// and more stored events each, no limit: answered with its 1,000) from the
// REQ to its EOSE, on one authenticated socket (go-nostr, which closes
// each before the next), sessions in DynamoDB as shipped. With
// APIGW_COSTS=on every post costs API Gateway's 20 ms (docs/benchmarks.md):
//
//	APIGW_COSTS=on go test -run '^$' -bench TenFilterREQToEOSE -benchtime 10x ./localdev/e2e
func BenchmarkTenFilterREQToEOSE(b *testing.B) {
	r := StartTest(b, Options{})
	chs := seedChannels(b, r, 10, 1500, false)
	filters := make(nostr.Filters, len(chs))
	for i, ch := range chs {
		filters[i] = nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {ch}}}
	}
	rl := benchDial(b, r, newBenchKey(b))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		sub, err := rl.Subscribe(ctxB(b), filters)
		if err != nil {
			b.Fatal(err)
		}
		select {
		case <-sub.EndOfStoredEvents:
		case reason := <-sub.ClosedReason:
			b.Fatalf("CLOSED %s", reason)
		case <-time.After(time.Minute):
			b.Fatal("no EOSE in a minute")
		}
		lat = append(lat, time.Since(start))
		sub.Unsub()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max_ms")
}

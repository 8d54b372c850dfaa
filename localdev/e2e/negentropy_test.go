package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip77"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// negClient is go-nostr's NIP-77 client side over one authenticated
// go-nostr connection: the library's negentropy (as nip77.NegentropySync
// drives it, which cannot authenticate) and its envelopes.
type negClient struct {
	t  *testing.T
	rl *nostr.Relay
	in chan string
}

// dialNeg connects a go-nostr relay whose NIP-77 frames come to in, and
// logs it in as u.
func dialNeg(t *testing.T, r *Relay, u user) *negClient {
	t.Helper()
	in := make(chan string, 64)
	rl, err := nostr.RelayConnect(context.Background(), r.WSURL, nostr.WithCustomHandler(func(data string) {
		if strings.HasPrefix(data, `["NEG-`) {
			in <- data
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rl.Close() })
	login(t, rl, u)
	return &negClient{t: t, rl: rl, in: in}
}

// negResult is what one reconciliation taught the client.
type negResult struct {
	haves, haveNots map[string]bool // the client's own, the relay's own
	rounds          int             // NEG-MSG answers from the relay
	err             string          // a NEG-ERR's reason
	elapsed         time.Duration
}

// reconcile runs one reconciliation of filter with the client's items.
func (c *negClient) reconcile(sub string, f nostr.Filter, items map[string]int64) negResult {
	c.t.Helper()
	vec := vector.New()
	for id, at := range items {
		vec.Insert(nostr.Timestamp(at), id)
	}
	vec.Seal()
	n := negentropy.New(vec, relayinfo.NegentropyFrameSize)
	res := negResult{haves: map[string]bool{}, haveNots: map[string]bool{}}
	done := make(chan struct{}, 2)
	go func() {
		for id := range n.Haves {
			res.haves[id] = true
		}
		done <- struct{}{}
	}()
	go func() {
		for id := range n.HaveNots {
			res.haveNots[id] = true
		}
		done <- struct{}{}
	}()
	start := time.Now()
	open, _ := nip77.OpenEnvelope{SubscriptionID: sub, Filter: f, Message: n.Start()}.MarshalJSON()
	c.write(open)
	deadline := time.After(2 * time.Minute)
	for {
		var data string
		select {
		case data = <-c.in:
		case <-deadline:
			c.t.Fatalf("no NIP-77 answer after %d rounds", res.rounds)
		}
		switch env := nip77.ParseNegMessage(data).(type) {
		case *nip77.ErrorEnvelope:
			res.err = env.Reason
			return res
		case *nip77.MessageEnvelope:
			res.rounds++
			next, err := n.Reconcile(env.Message)
			if err != nil {
				c.t.Fatalf("round %d: the library refused the relay's message: %v", res.rounds, err)
			}
			if next == "" {
				<-done
				<-done
				res.elapsed = time.Since(start)
				cl, _ := nip77.CloseEnvelope{SubscriptionID: sub}.MarshalJSON()
				c.write(cl)
				return res
			}
			msg, _ := nip77.MessageEnvelope{SubscriptionID: sub, Message: next}.MarshalJSON()
			c.write(msg)
		default:
			c.t.Fatalf("unexpected NIP-77 frame %s", data)
		}
	}
}

func (c *negClient) write(b []byte) {
	c.t.Helper()
	if err := <-c.rl.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// randomIDs are n ids no event has, at created_at at.
func randomIDs(n int, at int64) map[string]int64 {
	out := map[string]int64{}
	for range n {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		out[hex.EncodeToString(b)] = at
	}
	return out
}

// TestNegentropyReconcilesTwentyThousandEventChannelToTheExactDifference:
// a client holding another relay's copy of a 20,000-event channel (500 of
// this relay's events missing, 500 of its own this relay lacks) learns
// exactly those 1,000 with go-nostr's NIP-77 client, in a bounded number
// of rounds, with the sessions in DynamoDB as deployed (every round a
// separate invocation that finds the filter in the session store).
func TestNegentropyReconcilesTwentyThousandEventChannelToTheExactDifference(t *testing.T) {
	r := StartTest(t, Options{})
	ctx := context.Background()
	db, err := dbtest.Open(ctx, r.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	ch := uuid.NewString()
	now := time.Now().Unix()
	testkit.SeedChannel(t, db, testkit.SeedOptions{Channel: ch, Events: 20000, Start: now - 20000, PerSecond: 2, Seed: 77})
	testkit.Analyze(t, db)
	relay := map[string]int64{}
	rows, err := db.Pool.Query(ctx, `SELECT id, created_at FROM events WHERE channel_id = $1 AND deleted_at IS NULL`, ch)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		relay[id] = at
	}
	if rows.Err() != nil || len(relay) < 19000 {
		t.Fatalf("seeded %d live events (%v)", len(relay), rows.Err())
	}
	// The other relay's copy: every 40th of ours missing, 500 of its own.
	client, relayOnly := map[string]int64{}, map[string]bool{}
	i := 0
	for id, at := range relay {
		if i%40 == 0 && len(relayOnly) < 500 {
			relayOnly[id] = true
		} else {
			client[id] = at
		}
		i++
	}
	clientOnly := randomIDs(500, now-10000)
	for id, at := range clientOnly {
		client[id] = at
	}
	c := dialNeg(t, r, testkit.NewKey(t))
	res := c.reconcile("sync", nostr.Filter{Tags: nostr.TagMap{"h": {ch}}}, client)
	if res.err != "" {
		t.Fatalf("NEG-ERR %s", res.err)
	}
	if len(res.haveNots) != len(relayOnly) || len(res.haves) != len(clientOnly) {
		t.Fatalf("learned %d of the relay's own (want %d) and %d of the client's own (want %d)",
			len(res.haveNots), len(relayOnly), len(res.haves), len(clientOnly))
	}
	for id := range relayOnly {
		if !res.haveNots[id] {
			t.Fatalf("relay's %s not learned", id)
		}
	}
	for id := range clientOnly {
		if !res.haves[id] {
			t.Fatalf("client's %s not learned", id)
		}
	}
	if res.rounds > 8 {
		t.Errorf("%d rounds for 20,000 events, want at most 8", res.rounds)
	}
	t.Logf("%d events, 500+500 differences: %d rounds, %v", len(relay), res.rounds, res.elapsed)
}

// TestNegentropyNonMemberReconcilesNothingOfPrivateGroup: the access rule
// of REQ holds for NIP-77. A non-member reconciling a private group's
// filter learns none of its events (the relay's set is empty: every id
// the client holds comes back as the client's own), while a member
// learns them.
func TestNegentropyNonMemberReconcilesNothingOfPrivateGroup(t *testing.T) {
	r := newRelay(t)
	owner, rl := loggedIn(t, r)
	ch := createChannel(t, rl, owner, "private")
	posted := map[string]int64{}
	for i := range 3 {
		ev := publish(t, rl, owner, 9, nostr.Tags{{"h", ch}}, "secret "+string(rune('a'+i)))
		posted[ev.ID] = int64(ev.CreatedAt)
	}
	f := nostr.Filter{Tags: nostr.TagMap{"h": {ch}}}

	outsider := dialNeg(t, r, testkit.NewKey(t))
	res := outsider.reconcile("peek", f, posted)
	if res.err != "" || len(res.haveNots) != 0 || len(res.haves) != len(posted) {
		t.Fatalf("non-member: err %q, learned %d of the relay's, %d of its own (want 0 and %d)", res.err, len(res.haveNots), len(res.haves), len(posted))
	}
	empty := outsider.reconcile("peek2", f, map[string]int64{})
	if empty.err != "" || len(empty.haveNots) != 0 {
		t.Fatalf("non-member with nothing: err %q, learned %d ids", empty.err, len(empty.haveNots))
	}

	member := dialNeg(t, r, owner)
	mres := member.reconcile("mine", f, map[string]int64{})
	for id := range posted {
		if !mres.haveNots[id] {
			t.Fatalf("member did not learn %s (err %q)", id, mres.err)
		}
	}

	// An author-only kind (NIP-PL push lease) stays its author's: another
	// key reconciling the author's 30350s learns nothing, the author does.
	lease := signed(t, owner, 30350, nostr.Tags{{"d", "slot-1"}}, "nip44-ciphertext")
	newBridge(t, r, owner).accept(lease)
	lf := nostr.Filter{Kinds: []int{30350}, Authors: []string{owner.Pub}}
	if res := outsider.reconcile("lease", lf, map[string]int64{}); res.err == "" && len(res.haveNots) != 0 {
		t.Fatalf("another key learned %d author-only ids", len(res.haveNots))
	} else if res.err != "" && !strings.HasPrefix(res.err, "restricted:") {
		t.Fatalf("another key's reconciliation of author-only kinds: %q", res.err)
	}
	if res := member.reconcile("lease", lf, map[string]int64{}); !res.haveNots[lease.ID] {
		t.Fatalf("the author did not learn its own 30350 (err %q)", res.err)
	}
}

// TestNegentropyBadInputAnswersNegErrAndKeepsTheSocket is the attack table
// of NIP-77's messages: each is answered (NEG-ERR naming the subscription
// with a prefixed reason, or NOTICE when no subscription id can be read),
// and the same socket serves a COUNT afterwards.
func TestNegentropyBadInputAnswersNegErrAndKeepsTheSocket(t *testing.T) {
	r := newRelay(t)
	owner, rl := loggedIn(t, r)
	ch := createChannel(t, rl, owner, "open")
	for range 3 {
		publish(t, rl, owner, 9, nostr.Tags{{"h", ch}}, "m")
	}
	filter := map[string]any{"#h": []string{ch}}

	anon := dialRaw(t, r)
	anon.sendJSON([]any{"NEG-OPEN", "a", filter, "6100000200"})
	if why := negErr(t, anon, "a"); !strings.HasPrefix(why, "auth-required:") {
		t.Errorf("unauthenticated NEG-OPEN: %q, want auth-required:", why)
	}

	rc := dialRaw(t, r)
	rc.expect("AUTH")
	rc.auth(r, owner, rc.challenge)
	cases := []struct {
		name string
		msg  []any
		want string // prefix of the NEG-ERR reason
	}{
		{"NEG-MSG before NEG-OPEN", []any{"NEG-MSG", "s1", "6100000200"}, "closed:"},
		{"not hex", []any{"NEG-OPEN", "s2", filter, "61zz"}, "invalid:"},
		{"odd length", []any{"NEG-OPEN", "s3", filter, "610"}, "invalid:"},
		{"empty message", []any{"NEG-OPEN", "s4", filter, ""}, "invalid:"},
		{"id list claiming 2^28 ids", []any{"NEG-OPEN", "s5", filter, "61000002ffffff7f"}, "invalid:"},
		{"unknown mode", []any{"NEG-OPEN", "s6", filter, "61000009"}, "invalid:"},
		{"filter not an object", []any{"NEG-OPEN", "s7", "nope", "61"}, "invalid:"},
		{"no message", []any{"NEG-OPEN", "s8", filter}, "invalid:"},
		{"message not a string", []any{"NEG-OPEN", "s9", filter, 61}, "invalid:"},
		{"too many kinds", []any{"NEG-OPEN", "s10", map[string]any{"kinds": make([]int, 1001)}, "6100000200"}, "invalid:"},
		{"NEG-MSG after a NEG-ERR", []any{"NEG-MSG", "s2", "6100000200"}, "closed:"},
	}
	for _, c := range cases {
		rc.sendJSON(c.msg)
		if why := negErr(t, rc, c.msg[1].(string)); !strings.HasPrefix(why, c.want) {
			t.Errorf("%s: NEG-ERR %q, want %s", c.name, why, c.want)
		}
	}
	// No subscription id to name: a NOTICE.
	rc.send(`["NEG-OPEN", 5, {}, "61"]`)
	if got := rc.read(); str(t, got[0]) != "NOTICE" {
		t.Errorf("NEG-OPEN with a numeric id: %s, want NOTICE", joinRaw(got))
	}
	// Another version: the relay's own version alone (NIP-77).
	rc.sendJSON([]any{"NEG-OPEN", "v2", filter, "62"})
	if got := rc.expect("NEG-MSG"); str(t, got[2]) != "61" {
		t.Errorf("version 2 answered %s, want 61", joinRaw(got))
	}
	// A closed reconciliation is gone. NEG-CLOSE has no answer, and a
	// socket's messages are invoked concurrently, so the NEG-MSG is sent
	// again until one runs after it.
	rc.sendJSON([]any{"NEG-CLOSE", "v2"})
	for attempt := 0; ; attempt++ {
		rc.sendJSON([]any{"NEG-MSG", "v2", "6100000200"})
		got := rc.read()
		if str(t, got[0]) == "NEG-ERR" {
			if why := str(t, got[2]); !strings.HasPrefix(why, "closed:") {
				t.Errorf("NEG-MSG after NEG-CLOSE: %q, want closed:", why)
			}
			break
		}
		if attempt == 50 {
			t.Fatalf("NEG-MSG still answered after NEG-CLOSE: %s", joinRaw(got))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Past the item bound: blocked:, and the reconciliation is not kept.
	// The bound is lowered on this process's reconciler, so this part runs
	// where the functions run in this process (make test's default-mode
	// pass); with BUZZ_LAMBDA=processes the function binaries keep theirs.
	if binaries == nil {
		r.App.Core.Reconciler.MaxItems = 2
		rc.sendJSON([]any{"NEG-OPEN", "big", filter, "6100000200"})
		if why := negErr(t, rc, "big"); !strings.HasPrefix(why, "blocked:") {
			t.Errorf("more items than the bound: %q, want blocked:", why)
		}
		r.App.Core.Reconciler.MaxItems = 0
		rc.sendJSON([]any{"NEG-MSG", "big", "6100000200"})
		if why := negErr(t, rc, "big"); !strings.HasPrefix(why, "closed:") {
			t.Errorf("NEG-MSG after blocked: %q, want closed:", why)
		}
	}
	// The socket still serves.
	rc.sendJSON([]any{"COUNT", "n", filter})
	if got := rc.expect("COUNT"); !strings.Contains(string(got[2]), `"count"`) {
		t.Errorf("COUNT after the attacks: %s", joinRaw(got))
	}
}

// negErr reads the next frame, a NEG-ERR for sub, and returns its reason.
func negErr(t *testing.T, rc *rawConn, sub string) string {
	t.Helper()
	got := rc.read()
	if str(t, got[0]) != "NEG-ERR" || len(got) != 3 || str(t, got[1]) != sub {
		t.Fatalf("want NEG-ERR for %s, got %s", sub, joinRaw(got))
	}
	var why string
	_ = json.Unmarshal(got[2], &why)
	return why
}

// TestNegentropyRoundsCountAgainstTheReadLimit: every NEG-OPEN and NEG-MSG
// is a read at the door, as a REQ is: past RATE_READS_PER_MIN the round
// is answered NEG-ERR rate-limited:, and the socket stays open.
func TestNegentropyRoundsCountAgainstTheReadLimit(t *testing.T) {
	r := StartTest(t, Options{Env: map[string]string{"RATE_READS_PER_MIN": "3"}})
	freshWindow()
	u := testkit.NewKey(t)
	rc := dialRaw(t, r)
	rc.expect("AUTH")
	rc.auth(r, u, rc.challenge)
	var why string
	for i := 0; i < 6 && why == ""; i++ {
		rc.sendJSON([]any{"NEG-OPEN", "s", map[string]any{"kinds": []int{9}}, "6100000200"})
		got := rc.read()
		switch str(t, got[0]) {
		case "NEG-MSG":
		case "NEG-ERR":
			why = str(t, got[2])
		default:
			t.Fatalf("NEG-OPEN %d answered %s", i, joinRaw(got))
		}
	}
	if !strings.HasPrefix(why, "rate-limited:") {
		t.Fatalf("six NEG-OPENs under a limit of 3 reads a minute: last refusal %q, want rate-limited:", why)
	}
	rc.sendJSON([]any{"NEG-CLOSE", "s"})
	rc.sendJSON([]any{"CLOSE", "nothing"})
}

package sessions_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/s3local"
	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// localIdle is an Idle over a fresh local S3 server; others share its
// bucket as other instances would.
func localIdle(t *testing.T, latest int64) (*sessions.Idle, func() *sessions.Idle) {
	d, instance, _ := countedIdle(t, latest)
	return d, instance
}

// counting counts the GETs and DELETEs of an instance's object store.
type counting struct {
	sessions.Objects
	gets, deletes atomic.Int64
}

func (c *counting) Get(ctx context.Context, key string) ([]byte, bool, error) {
	c.gets.Add(1)
	return c.Objects.Get(ctx, key)
}

func (c *counting) Delete(ctx context.Context, key string) error {
	c.deletes.Add(1)
	return c.Objects.Delete(ctx, key)
}

// countedIdle is localIdle whose other instances count their requests
// (counted: a new instance and its counts).
func countedIdle(t *testing.T, latest int64) (*sessions.Idle, func() *sessions.Idle, func() (*sessions.Idle, *counting)) {
	t.Helper()
	srv := s3local.ForTest(t, "media")
	b, err := s3blobs.Open(context.Background(), "", "media", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	over := func(obj sessions.Objects) *sessions.Idle {
		d := sessions.NewIdle(obj, "sessions/", sessions.NewChallenges([]byte("k")))
		d.Latest = func(context.Context, string) (int64, error) { return latest, nil }
		return d
	}
	instance := func() *sessions.Idle { return over(b) }
	counted := func() (*sessions.Idle, *counting) {
		c := &counting{Objects: b}
		return over(c), c
	}
	return instance(), instance, counted
}

func since(v int64) *nostr.Timestamp { ts := nostr.Timestamp(v); return &ts }

func TestAbove(t *testing.T) {
	for _, c := range []struct {
		name    string
		filters []nostr.Filter
		want    bool
	}{
		{"no filter", nil, false},
		{"no since", []nostr.Filter{{Kinds: []int{9}}}, false},
		{"since at the mark", []nostr.Filter{{Since: since(100)}}, false},
		{"since after the mark", []nostr.Filter{{Since: since(101)}}, true},
		{"one filter without", []nostr.Filter{{Since: since(101)}, {Kinds: []int{1}}}, false},
		{"every filter after", []nostr.Filter{{Since: since(101)}, {Since: since(500)}}, true},
	} {
		if got := sessions.Above(c.filters, 100); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestChallengeIsKeyedByTheRelayKeyAlone: a connection's challenge is a
// function of its id and the key only (the greeting's function and
// ws-message derive the same string in either session mode), differs
// across ids and keys, and a Challenges without a key still has one.
func TestChallengeIsKeyedByTheRelayKeyAlone(t *testing.T) {
	a := sessions.NewChallenges([]byte("one"))
	b := sessions.NewChallenges([]byte("two"))
	if a.For("x=") != sessions.NewChallenges([]byte("one")).For("x=") {
		t.Fatal("the same key and id give another challenge")
	}
	if a.For("x=") == a.For("y=") || a.For("x=") == b.For("x=") {
		t.Fatal("challenges repeat across ids or keys")
	}
	if len(a.For("x=")) != 32 {
		t.Fatalf("challenge %q", a.For("x="))
	}
	// Without a key, not the MAC under an empty key, which anyone could
	// compute from the connection id.
	var zero sessions.Challenges
	m := hmac.New(sha256.New, nil)
	m.Write([]byte("nip42-challenge\x00x="))
	if !zero.Zero() || zero.For("x=") == hex.EncodeToString(m.Sum(nil)[:16]) || zero.For("x=") != zero.For("x=") {
		t.Fatalf("a Challenges without a key: %q", zero.For("x="))
	}
}

// TestMarkNeverGoesDown: the first mark starts at the stored events'
// latest, a lower raise changes nothing, concurrent raises on several
// instances leave the highest.
func TestMarkNeverGoesDown(t *testing.T) {
	ctx := context.Background()
	d, instance := localIdle(t, 500)
	if _, ok, err := d.Mark(ctx, "c1"); err != nil || ok {
		t.Fatalf("a mark before any commit: %v %v", ok, err)
	}
	if err := d.Raise(ctx, "c1", 100); err != nil {
		t.Fatal(err)
	}
	if m, ok, err := d.Mark(ctx, "c1"); err != nil || !ok || m != 500 {
		t.Fatalf("first mark %d %v %v, want the latest stored (500)", m, ok, err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := instance().Raise(ctx, "c1", int64(600+i*10)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := instance().Raise(ctx, "c1", 550); err != nil {
		t.Fatal(err)
	}
	if m, _, err := instance().Mark(ctx, "c1"); err != nil || m != 670 {
		t.Fatalf("mark %d %v, want 670", m, err)
	}
	if m, ok, _ := d.Mark(ctx, "c2"); ok {
		t.Fatalf("another community's mark: %d", m)
	}
}

// TestPendingFold: a REQ above the mark is pending until a commit's
// Collect lists it (with its connection); one at or below the mark is
// not answered and writes nothing; a gone connection's pending ones are
// not folded, its rows are; Done empties what was folded.
func TestPendingFold(t *testing.T) {
	ctx := context.Background()
	d, instance := localIdle(t, 0)
	if err := d.Raise(ctx, "c1", 1000); err != nil {
		t.Fatal(err)
	}
	conn := &sessions.Connection{ID: "Abc/d+e=", Pubkey: "aa", ConnectedAt: 900}
	old := []nostr.Filter{{Kinds: []int{9}, Since: since(1000), Tags: nostr.TagMap{"h": {"ch"}}}}
	if ok, err := d.SubscribeIdle(ctx, "c1", conn, "s0", old); err != nil || ok {
		t.Fatalf("since at the mark answered: %v %v", ok, err)
	}
	live := []nostr.Filter{{Kinds: []int{9}, Since: since(1001), Tags: nostr.TagMap{"h": {"ch"}}}}
	if ok, err := d.SubscribeIdle(ctx, "c1", conn, "s/1", live); err != nil || !ok {
		t.Fatalf("since after the mark: %v %v", ok, err)
	}
	other := &sessions.Connection{ID: "gone=", Pubkey: "bb", ConnectedAt: 900}
	if ok, err := d.SubscribeIdle(ctx, "c1", other, "x", live); err != nil || !ok {
		t.Fatalf("second connection: %v %v", ok, err)
	}
	if err := d.Gone(ctx, other.ID, "c1", other.Pubkey); err != nil {
		t.Fatal(err)
	}
	f, err := instance().Collect(ctx, "c1", 1005)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Connections) != 1 || f.Connections[0].ID != conn.ID || f.Connections[0].Pubkey != "aa" ||
		f.Connections[0].Challenge != sessions.NewChallenges([]byte("k")).For(conn.ID) {
		t.Fatalf("connections %+v", f.Connections)
	}
	if len(f.Subs) != 1 || f.Subs[0].Sub != "s/1" || f.Subs[0].Connection != conn.ID || len(f.Subs[0].Pins) != 1 || f.Subs[0].Pins[0] != "ch" {
		t.Fatalf("subscriptions %+v", f.Subs)
	}
	if len(f.Gone) != 1 || f.Gone[0] != other.ID {
		t.Fatalf("gone %v", f.Gone)
	}
	// The commit raised the mark: a REQ for what it may store goes to the
	// database.
	if ok, err := d.SubscribeIdle(ctx, "c1", conn, "s2", live); err != nil || ok {
		t.Fatalf("REQ below the raised mark answered: %v %v", ok, err)
	}
	if err := d.Done(ctx, f); err != nil {
		t.Fatal(err)
	}
	f, err = d.Collect(ctx, "c1", 1005)
	if err != nil || len(f.Subs)+len(f.Gone)+len(f.Connections) != 0 {
		t.Fatalf("after Done: %+v %v", f, err)
	}
}

// TestIdleSubscriptionsLimitedPerConnectionAndKey: a connection holds at
// most relayinfo.MaxSubscriptions pending subscriptions (the database
// path's refusal, restricted:) and a key at most
// relayinfo.MaxIdleSubscriptionsPerKey across its connections
// (rate-limited:), however many REQs it sends, concurrently or not; a
// replaced subscription is no new one; a $disconnect frees its
// connection's; so a commit's fold fetches and deletes at most that many
// of the key's.
func TestIdleSubscriptionsLimitedPerConnectionAndKey(t *testing.T) {
	ctx := context.Background()
	d, instance, counted := countedIdle(t, 0)
	if err := d.Raise(ctx, "c1", 1000); err != nil {
		t.Fatal(err)
	}
	live := []nostr.Filter{{Kinds: []int{9}, Since: since(5000)}}
	conn := func(i int) *sessions.Connection {
		return &sessions.Connection{ID: fmt.Sprintf("conn-%d=", i), Pubkey: "aa", ConnectedAt: 900}
	}
	refusal := func(c *sessions.Connection, sub string, prefix reject.Prefix) {
		t.Helper()
		ok, err := d.SubscribeIdle(ctx, "c1", c, sub, live)
		r, refused := reject.As(err)
		if ok || !refused || r.Prefix != prefix {
			t.Fatalf("%s %s: %v %v, want a %s refusal", c.ID, sub, ok, err, prefix)
		}
	}
	perConn := relayinfo.MaxSubscriptions
	perKey := relayinfo.MaxIdleSubscriptionsPerKey
	for i := range perKey / perConn {
		for j := range perConn {
			if ok, err := d.SubscribeIdle(ctx, "c1", conn(i), fmt.Sprintf("s%d", j), live); err != nil || !ok {
				t.Fatalf("conn %d sub %d: %v %v", i, j, ok, err)
			}
		}
		refusal(conn(i), "one more", reject.Restricted)
		// A replaced subscription is no new one.
		if ok, err := d.SubscribeIdle(ctx, "c1", conn(i), "s0", live); err != nil || !ok {
			t.Fatalf("replacing s0: %v %v", ok, err)
		}
	}
	extra := conn(perKey / perConn)
	refusal(extra, "s0", reject.RateLimited)
	refusal(extra, "s1", reject.RateLimited) // on this instance for RefuseFor, without a request
	// A REQ for stored events is the database's, refused or not here.
	if ok, err := d.SubscribeIdle(ctx, "c1", extra, "old", []nostr.Filter{{Since: since(500)}}); ok || err != nil {
		t.Fatalf("a REQ below the mark: %v %v, want it left to the database", ok, err)
	}
	// Another key is not held by this one's.
	if ok, err := d.SubscribeIdle(ctx, "c1", &sessions.Connection{ID: "b", Pubkey: "bb", ConnectedAt: 900}, "s0", live); err != nil || !ok {
		t.Fatalf("another key: %v %v", ok, err)
	}
	folder, n := counted()
	f, err := folder.Collect(ctx, "c1", 5000)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Subs) != perKey+1 || n.gets.Load() != int64(perKey+1) {
		t.Fatalf("a fold lists %d subscriptions with %d GETs, want the key's %d and the other key's one", len(f.Subs), n.gets.Load(), perKey)
	}
	// Its $disconnect frees a connection's (the fold raised the mark:
	// what is live now starts later).
	live = []nostr.Filter{{Kinds: []int{9}, Since: since(6000)}}
	if err := d.Gone(ctx, conn(0).ID, "c1", "aa"); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.SubscribeIdle(ctx, "c1", extra, "s0", live); err != nil || !ok {
		t.Fatalf("after a $disconnect: %v %v", ok, err)
	}

	// Concurrent REQs of one connection: never more than its limit held.
	burst := &sessions.Connection{ID: "burst", Pubkey: "cc", ConnectedAt: 900}
	var accepted atomic.Int64
	testkit.AtOnce(4*perConn, func(i int) {
		ok, err := d.SubscribeIdle(ctx, "c1", burst, fmt.Sprintf("b%d", i), live)
		if _, refused := reject.As(err); err != nil && !refused {
			t.Error(err)
		}
		if ok {
			accepted.Add(1)
		}
	})
	f, err = instance().Collect(ctx, "c1", 6000)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, s := range f.Subs {
		if s.Connection == burst.ID {
			held++
		}
	}
	if n := accepted.Load(); n > int64(perConn) || int64(held) != n {
		t.Fatalf("a burst of %d REQs: %d answered, %d held; want at most %d, all held", 4*perConn, n, held, perConn)
	}
}

// TestFarFutureREQsCostAWriteNoFetch: a pending subscription whose lowest
// since is above what a commit may store matches none of its events: the
// commit's fold leaves it pending without fetching it, and the first
// commit that may store an event at that since folds it. A REQ of the same
// id with another since replaces it.
func TestFarFutureREQsCostAWriteNoFetch(t *testing.T) {
	ctx := context.Background()
	d, _, counted := countedIdle(t, 0)
	if err := d.Raise(ctx, "c1", 1000); err != nil {
		t.Fatal(err)
	}
	c := &sessions.Connection{ID: "x", Pubkey: "aa", ConnectedAt: 900}
	far := []nostr.Filter{{Kinds: []int{9}, Since: since(1001)}, {Kinds: []int{7}, Since: since(9000)}}
	if ok, err := d.SubscribeIdle(ctx, "c1", c, "far", []nostr.Filter{{Since: since(8000)}}); err != nil || !ok {
		t.Fatalf("far: %v %v", ok, err)
	}
	if ok, err := d.SubscribeIdle(ctx, "c1", c, "far", []nostr.Filter{{Since: since(9000)}}); err != nil || !ok { // replaced
		t.Fatalf("far again: %v %v", ok, err)
	}
	if ok, err := d.SubscribeIdle(ctx, "c1", c, "near", far); err != nil || !ok {
		t.Fatalf("near: %v %v", ok, err)
	}
	folder, n := counted()
	f, err := folder.Collect(ctx, "c1", 1001)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Subs) != 1 || f.Subs[0].Sub != "near" || n.gets.Load() != 1 {
		t.Fatalf("a commit up to 1001 folds %+v with %d GETs, want near alone (its lowest since is 1001)", f.Subs, n.gets.Load())
	}
	if err := folder.Done(ctx, f); err != nil {
		t.Fatal(err)
	}
	f, err = folder.Collect(ctx, "c1", 8999)
	if err != nil || len(f.Subs) != 0 {
		t.Fatalf("a commit up to 8999: %+v %v, want nothing (far was replaced by its since 9000)", f, err)
	}
	f, err = folder.Collect(ctx, "c1", 9000)
	if err != nil || len(f.Subs) != 1 || f.Subs[0].Sub != "far" {
		t.Fatalf("a commit up to 9000: %+v %v, want far", f, err)
	}
}

// TestRekeyKeepsPendingReachable: a connection that authenticates again as
// another key keeps its pending subscriptions (opened by the first key, as
// the database path keeps its rows), and a CLOSE under the new key ends
// them.
func TestRekeyKeepsPendingReachable(t *testing.T) {
	ctx := context.Background()
	d, instance := localIdle(t, 0)
	if err := d.Raise(ctx, "c1", 1000); err != nil {
		t.Fatal(err)
	}
	live := []nostr.Filter{{Kinds: []int{9}, Since: since(1001)}}
	c := &sessions.Connection{ID: "x", Pubkey: "aa", ConnectedAt: 900}
	for _, sub := range []string{"one", "two"} {
		if ok, err := d.SubscribeIdle(ctx, "c1", c, sub, live); err != nil || !ok {
			t.Fatalf("%s: %v %v", sub, ok, err)
		}
	}
	if err := d.Rekey(ctx, "c1", "x", "aa", "bb"); err != nil {
		t.Fatal(err)
	}
	if err := d.DropPending(ctx, "c1", "bb", "x", "one"); err != nil {
		t.Fatal(err)
	}
	f, err := instance().Collect(ctx, "c1", 1001)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Subs) != 1 || f.Subs[0].Sub != "two" || f.Subs[0].Pubkey != "aa" || len(f.Connections) != 1 || f.Connections[0].Pubkey != "bb" {
		t.Fatalf("after the new key's CLOSE: %+v %+v", f.Subs, f.Connections)
	}
}

// TestFoldLeftByAFailedWriteCostsTheNextOneTheSame: a write that failed or
// timed out after collecting its fold deletes nothing (Done runs after a
// commit only); the next write collects the same subscriptions with the
// same number of requests (its rows are upserts: folding twice changes
// nothing), not more, and its Done empties them.
func TestFoldLeftByAFailedWriteCostsTheNextOneTheSame(t *testing.T) {
	ctx := context.Background()
	d, _, counted := countedIdle(t, 0)
	if err := d.Raise(ctx, "c1", 1000); err != nil {
		t.Fatal(err)
	}
	live := []nostr.Filter{{Kinds: []int{9}, Since: since(1001)}}
	for i := range relayinfo.MaxSubscriptions {
		if ok, err := d.SubscribeIdle(ctx, "c1", &sessions.Connection{ID: "x", Pubkey: "aa", ConnectedAt: 900}, fmt.Sprintf("s%d", i), live); err != nil || !ok {
			t.Fatalf("%d: %v %v", i, ok, err)
		}
	}
	var gets []int64
	var f *sessions.Fold
	for range 2 {
		folder, n := counted()
		var err error
		if f, err = folder.Collect(ctx, "c1", 1001); err != nil {
			t.Fatal(err)
		}
		if len(f.Subs) != relayinfo.MaxSubscriptions {
			t.Fatalf("collected %d, want %d", len(f.Subs), relayinfo.MaxSubscriptions)
		}
		gets = append(gets, n.gets.Load())
	}
	if gets[0] != gets[1] || gets[0] != int64(relayinfo.MaxSubscriptions) {
		t.Fatalf("GETs of the failed write's fold and the next one's: %v, want %d each", gets, relayinfo.MaxSubscriptions)
	}
	if err := d.Done(ctx, f); err != nil {
		t.Fatal(err)
	}
	if f, err := d.Collect(ctx, "c1", 1001); err != nil || len(f.Subs) != 0 {
		t.Fatalf("after Done: %+v %v", f, err)
	}
}

package sessions_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/s3local"
	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/service/sessions"
)

// localIdle is an Idle over a fresh local S3 server; others share its
// bucket as other instances would.
func localIdle(t *testing.T, latest int64) (*sessions.Idle, func() *sessions.Idle) {
	t.Helper()
	srv := s3local.ForTest(t, "media")
	b, err := s3blobs.Open(context.Background(), "", "media", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	instance := func() *sessions.Idle {
		d := sessions.NewIdle(b, "sessions/", sessions.NewChallenges([]byte("k")))
		d.Latest = func(context.Context, string) (int64, error) { return latest, nil }
		return d
	}
	return instance(), instance
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
	if err := d.Gone(ctx, other.ID, "c1"); err != nil {
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

// gate admits the keys it lists (a stand-in for the NIP-43 registry's
// answer; the registry itself runs against Postgres in its own tests).
type gate map[string]bool

func (g gate) AdmitMember(_ context.Context, _, pubkey string) error {
	if g[pubkey] {
		return nil
	}
	return nip43.ErrNotMember
}

// TestPendingFoldAsksTheMembershipGate: a REQ answered from the mark
// never met the NIP-43 gate (it needs the database); the fold asks it,
// and a key it refuses is dropped unfolded, so it gets no live delivery.
func TestPendingFoldAsksTheMembershipGate(t *testing.T) {
	ctx := context.Background()
	d, instance := localIdle(t, 0)
	if err := d.Raise(ctx, "c1", 1000); err != nil {
		t.Fatal(err)
	}
	live := []nostr.Filter{{Kinds: []int{9}, Since: since(1001), Tags: nostr.TagMap{"h": {"ch"}}}}
	member := &sessions.Connection{ID: "m", Pubkey: "aa", ConnectedAt: 900}
	stranger := &sessions.Connection{ID: "s", Pubkey: "bb", ConnectedAt: 900}
	for _, c := range []*sessions.Connection{member, stranger} {
		if ok, err := d.SubscribeIdle(ctx, "c1", c, "live", live); err != nil || !ok {
			t.Fatalf("%s: %v %v", c.ID, ok, err)
		}
	}
	folder := instance()
	folder.Members = gate{"aa": true}
	f, err := folder.Collect(ctx, "c1", 1005)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Subs) != 1 || f.Subs[0].Connection != member.ID || len(f.Connections) != 1 || f.Connections[0].ID != member.ID {
		t.Fatalf("folded %+v %+v, want only the member's", f.Subs, f.Connections)
	}
	if err := folder.Done(ctx, f); err != nil {
		t.Fatal(err)
	}
	if f, err := folder.Collect(ctx, "c1", 1005); err != nil || len(f.Subs) != 0 {
		t.Fatalf("the refused key's pending stayed: %+v %v", f, err)
	}
}

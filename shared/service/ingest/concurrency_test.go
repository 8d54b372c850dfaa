package ingest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// idleHarness is a harness whose writes are prepared as make dev prepares
// them (SESSION_TABLE set): the sessions' last-commit mark in the local
// DynamoDB, raised before each commit.
func idleHarness(t *testing.T) (*harness, *sessions.Registry) {
	t.Helper()
	h := newHarness(t)
	reg := sessions.NewRegistry(sessionstest.DynamoDB(t).Store)
	reg.Latest = h.st.EventsGetLatestCreatedAt
	h.svc = h.svc.WithMark(reg.RaiseMark)
	return h, reg
}

// burst submits evs at once and fails unless every one is accepted with no
// message; it returns the relay-signed events each committed.
func (h *harness) burst(what string, evs []*nostr.Event) [][]*nostr.Event {
	h.t.Helper()
	outs, errs := h.all(evs)
	failed := 0
	var signed [][]*nostr.Event
	for i, o := range outs {
		if errs[i] != nil || !o.Accepted || o.Message != "" {
			failed++
			if failed <= 3 {
				h.t.Errorf("%s %d: accepted=%v %q err=%v", what, i, o.Accepted, o.Message, errs[i])
			}
			continue
		}
		signed = append(signed, o.Committed[1:])
	}
	if failed > 0 {
		h.t.Fatalf("%s: %d of %d not accepted", what, failed, len(evs))
	}
	return signed
}

// strictlyNewer fails unless, for each state kind, the relay-signed events
// the writes committed have pairwise distinct created_at (each newer than
// its predecessor: the head is the newest), and the stored head is the
// newest of them.
func (h *harness) strictlyNewer(ch string, signed [][]*nostr.Event) {
	h.t.Helper()
	at := map[int][]int64{}
	for _, evs := range signed {
		for _, ev := range evs {
			if kinds.ChannelState(ev.Kind) {
				at[ev.Kind] = append(at[ev.Kind], int64(ev.CreatedAt))
			}
		}
	}
	for k, ts := range at {
		slices.Sort(ts)
		for i := 1; i < len(ts); i++ {
			if ts[i] == ts[i-1] {
				h.t.Fatalf("two kind %d heads of %s at %d: not each newer than its predecessor", k, ch, ts[i])
			}
		}
		if got := int64(h.head(ch, k).CreatedAt); got != ts[len(ts)-1] {
			h.t.Fatalf("kind %d head of %s at %d, the newest signed at %d", k, ch, got, ts[len(ts)-1])
		}
	}
}

// members is the set of p keys of ch's 39002 head.
func (h *harness) members(ch string) []string {
	h.t.Helper()
	var out []string
	for _, t := range h.head(ch, kinds.GroupMembers).Tags {
		if len(t) >= 2 && t[0] == "p" {
			out = append(out, t[1])
		}
	}
	slices.Sort(out)
	return out
}

func sortedKeys(keys ...string) []string {
	out := slices.Clone(keys)
	slices.Sort(out)
	return out
}

// markCovers fails unless the community's last-commit mark is at least
// every created_at stored (an idle REQ above the mark can match nothing).
func (h *harness) markCovers(idle *sessions.Registry) {
	h.t.Helper()
	m, err := idle.Mark(context.Background(), community)
	if err != nil || !m.Exists {
		h.t.Fatalf("mark: %v %v", m.Exists, err)
	}
	if hi := h.scalar(`SELECT max(created_at) FROM events`); int64(hi) > m.Value {
		h.t.Fatalf("an event at %d is stored above the last-commit mark %d", hi, m.Value)
	}
}

// TestConcurrentJoinsAllAccepted (issue 36): 30 joins to one group sent at
// once, then their 30 leaves, with the sessions' S3 path on as in make
// dev: every one accepted (no error, which the transports answer 5xx);
// each relay-signed 39000-39002 newer than its predecessor; the final
// 39002 lists exactly the members; the last-commit mark covers every
// stored event. On 970cdaa most failed after re-preparing the write.
func TestConcurrentJoinsAllAccepted(t *testing.T) {
	h, idle := idleHarness(t)
	owner := testkit.NewKey(t)
	ch := h.channel(owner)
	const n = 30
	keys := make([]testkit.Key, n)
	joins := make([]*nostr.Event, n)
	want := []string{owner.Pub}
	for i := range keys {
		keys[i] = testkit.NewKey(t)
		joins[i] = keys[i].Event(t, kinds.JoinRequest, "", nostr.Tag{"h", ch})
		want = append(want, keys[i].Pub)
	}
	signed := h.burst("join", joins)
	h.strictlyNewer(ch, signed)
	if got := h.members(ch); !slices.Equal(got, sortedKeys(want...)) {
		t.Fatalf("39002 after %d joins lists %d keys, want %d: %v", n, len(got), len(want), got)
	}
	h.markCovers(idle)

	leaves := make([]*nostr.Event, n)
	for i, k := range keys {
		leaves[i] = k.Event(t, kinds.LeaveRequest, "", nostr.Tag{"h", ch})
	}
	signed = append(signed, h.burst("leave", leaves)...)
	h.strictlyNewer(ch, signed)
	if got := h.members(ch); !slices.Equal(got, []string{owner.Pub}) {
		t.Fatalf("39002 after every leave lists %v, want only the owner", got)
	}
	if n := h.scalar(`SELECT count(*) FROM channel_members WHERE channel_id = $1 AND removed_at IS NULL`, ch); n != 1 {
		t.Fatalf("%d active members, want the owner alone", n)
	}
	h.markCovers(idle)
	h.noOrphans()
}

// TestConcurrentModerationRacingJoins (issue 36): an admin's 9000 adds and
// 9001 removals, 9002 edits and members' joins to one group, all at once
// with the S3 path on: all accepted, each state kind's events strictly
// newer one after another, and the final 39000, 39001 and 39002 exact.
func TestConcurrentModerationRacingJoins(t *testing.T) {
	h, idle := idleHarness(t)
	owner, admin := testkit.NewKey(t), testkit.NewKey(t)
	ch := h.channel(owner)
	h.ok(owner.Event(t, kinds.PutUser, "", nostr.Tag{"h", ch}, nostr.Tag{"p", admin.Pub, "admin"}))
	const n = 12
	var evs []*nostr.Event
	want := []string{owner.Pub, admin.Pub}
	gone := make([]testkit.Key, n)
	for i := range gone { // members the admin removes in the burst
		gone[i] = testkit.NewKey(t)
		h.ok(gone[i].Event(t, kinds.JoinRequest, "", nostr.Tag{"h", ch}))
		evs = append(evs, admin.Event(t, kinds.RemoveUser, "", nostr.Tag{"h", ch}, nostr.Tag{"p", gone[i].Pub}))
	}
	for range n {
		added, joiner := testkit.NewKey(t), testkit.NewKey(t)
		want = append(want, added.Pub, joiner.Pub)
		evs = append(evs,
			admin.Event(t, kinds.PutUser, "", nostr.Tag{"h", ch}, nostr.Tag{"p", added.Pub, "member"}),
			joiner.Event(t, kinds.JoinRequest, "", nostr.Tag{"h", ch}))
	}
	for i := range n {
		evs = append(evs, owner.Event(t, kinds.EditMetadata, "", nostr.Tag{"h", ch}, nostr.Tag{"about", fmt.Sprint("edit ", i)}))
	}
	signed := h.burst("moderation", evs)
	h.strictlyNewer(ch, signed)
	if got := h.members(ch); !slices.Equal(got, sortedKeys(want...)) {
		t.Fatalf("39002 lists %d keys, want %d", len(got), len(want))
	}
	if !hasTag(h.head(ch, kinds.GroupAdmins), "p", admin.Pub, "admin") {
		t.Fatal("39001 lost the admin")
	}
	// The 39000 head is the last edit applied: the about of the newest
	// 9002 the commit order put last.
	var about string
	if err := h.db.QueryRow(context.Background(), `SELECT about FROM channels WHERE id = $1`, ch).Scan(&about); err != nil {
		t.Fatal(err)
	}
	if !hasTag(h.head(ch, kinds.GroupMetadata), "about", about) {
		t.Fatalf("39000 head does not carry the channel's about %q", about)
	}
	h.markCovers(idle)
	h.noOrphans()
}

// TestRunAheadStateReachesIdleSubscription (issue 36): a REQ answered from
// the last-commit mark (its subscription stored in the session store,
// then EOSE) after a write raised the mark but before it committed a
// state event dated past that raise (a 39002 at previous+1, past the
// clock) is in that commit's audience: the write raises the mark again
// before its commit, and the audience read after the commit finds the
// subscription, up to the cutoff taken then.
func TestRunAheadStateReachesIdleSubscription(t *testing.T) {
	h, idle := idleHarness(t)
	fixed := time.Now()
	h.svc = h.svc.WithClock(func() time.Time { return fixed })
	owner, joiner := testkit.NewKey(t), testkit.NewKey(t)
	ch := testkit.ChannelID()
	h.ok(owner.EventAt(t, fixed, kinds.CreateGroup, "", nostr.Tag{"h", ch}, nostr.Tag{"name", "g"}))
	// The group's 39002 is dated now: the join's, in the same second, is
	// dated a second later, past the clock and the mark its write raised
	// first.
	m, err := idle.Mark(context.Background(), community)
	if err != nil {
		t.Fatal(err)
	}
	if m.Value != fixed.Unix() {
		t.Fatalf("mark %d after a write at %d", m.Value, fixed.Unix())
	}
	conn := session.Connection{ID: "c1", Community: community, Pubkey: owner.Pub, Challenge: "x", ConnectedAt: fixed.Unix()}
	if _, err := idle.Open(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	since := nostr.Timestamp(m.Value + 1)
	filters := []nostr.Filter{{Kinds: []int{kinds.GroupMembers}, Since: &since}}
	var once sync.Once
	var answered bool
	h.svc = h.svc.WithMark(func(ctx context.Context, c string, upTo int64) error {
		err := idle.RaiseMark(ctx, c, upTo)
		// After the first raise: the REQ finds the mark unmoved.
		once.Do(func() {
			if err = idle.Subscribe(ctx, community, conn.ID, "s1", owner.Pub, filters, sessions.DefaultLimits); err == nil {
				var a sessions.Answer
				a, _, err = idle.StoreAnswer(ctx, community, owner.Pub, "s1", filters)
				answered = a == sessions.FromMark
			}
		})
		return err
	})
	out := h.ok(joiner.EventAt(t, fixed, kinds.JoinRequest, "", nostr.Tag{"h", ch}))
	if !answered {
		t.Fatal("the REQ was not answered from the mark")
	}
	var members *nostr.Event
	for _, ev := range out.Committed {
		if ev.Kind == kinds.GroupMembers {
			members = ev
		}
	}
	if members == nil || int64(members.CreatedAt) < int64(since) {
		t.Fatalf("the join's 39002 %v does not run ahead of the REQ's since %d", members, since)
	}
	h.markCovers(idle)
	ctx := context.Background()
	cutoff, err := idle.Cutoff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	subs, err := idle.AudienceRange(ctx, session.AudienceRangeParams{Community: community, Channels: []string{ch}, Cutoff: cutoff, After: "", Through: "\U0010FFFF"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range subs {
		found = found || (s.Connection == conn.ID && s.Sub == "s1")
	}
	if !found {
		t.Fatalf("the commit's audience does not hold the REQ answered from the mark before it (%d subscriptions)", len(subs))
	}
}

// TestBurstLeavesPoolToLockHolder (issue 36): writes to one channel wait
// for it without holding the pool: with two connections and twenty joins
// at once, the write holding the channel's lock still reads through the
// pool while it holds it (its preparation, as the sessions' membership gate
// does) and every join is accepted. Before, the waiting writes held every
// connection and the holder waited for one until the request's deadline
// (the 200-join burst answered 503 "the database is resuming").
func TestBurstLeavesPoolToLockHolder(t *testing.T) {
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 2})
	key := testkit.RelayKey(t)
	h := &harness{t: t, st: st, db: db, svc: ingest.New(st, key), relay: key}
	owner := testkit.NewKey(t)
	ch := h.channel(owner)
	h.svc = h.svc.WithMark(func(ctx context.Context, c string, upTo int64) error {
		if _, err := st.EventsGetLatestCreatedAt(ctx, c); err != nil {
			return err
		}
		return nil
	})
	evs := make([]*nostr.Event, 20)
	for i := range evs {
		evs[i] = testkit.NewKey(t).Event(t, kinds.JoinRequest, "", nostr.Tag{"h", ch})
	}
	errs := make([]error, len(evs))
	testkit.AtOnce(len(evs), func(i int) {
		// Bounds a wait that never ends (the failure), not a speed.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out ingest.Outcome
		out, errs[i] = h.svc.Submit(ctx, community, evs[i].PubKey, evs[i])
		if errs[i] == nil && (!out.Accepted || out.Message != "") {
			errs[i] = fmt.Errorf("accepted=%v %q", out.Accepted, out.Message)
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("join %d: %v", i, err)
		}
	}
	if got := len(h.members(ch)); got != len(evs)+1 {
		t.Fatalf("39002 lists %d keys, want %d", got, len(evs)+1)
	}
}

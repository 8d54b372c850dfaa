package sessions_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
)

// TestSessionStoreResumeRecords: a record is found by its community, key,
// subscription id and shape while live, a save replaces it, and it is
// absent once expired or asked for by anything else.
func TestSessionStoreResumeRecords(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		im.Community(t, "c1")
		im.Community(t, "c2")
		now := time.Now().Unix()
		r := session.Resume{Community: "c1", Pubkey: "pk", Sub: "s", Shape: "shape", Since: []int64{-1, 5}, Limit: []int64{50, -1},
			Wrote: 7, At: now - 100, Newest: now - 150, ExpiresAt: now + 100}
		if err := im.Store.SaveResume(ctx, r); err != nil {
			t.Fatal(err)
		}
		got, err := im.Store.Resume(ctx, session.ResumeParams{Community: "c1", Pubkey: "pk", Sub: "s", Shape: "shape", Now: now})
		if err != nil || got == nil {
			t.Fatalf("resume: %v %v", got, err)
		}
		if got.Wrote != 7 || got.At != r.At || got.Newest != r.Newest || got.ExpiresAt != r.ExpiresAt || !slices.Equal(got.Since, r.Since) || !slices.Equal(got.Limit, r.Limit) {
			t.Fatalf("resume read %+v, saved %+v", *got, r)
		}
		for _, k := range [][4]string{{"c2", "pk", "s", "shape"}, {"c1", "pk2", "s", "shape"}, {"c1", "pk", "s2", "shape"}, {"c1", "pk", "s", "other"}} {
			if got, err := im.Store.Resume(ctx, session.ResumeParams{Community: k[0], Pubkey: k[1], Sub: k[2], Shape: k[3], Now: now}); got != nil || err != nil {
				t.Fatalf("resume of %v: %+v %v", k, got, err)
			}
		}
		r.Wrote, r.ExpiresAt = 8, now+200
		if err := im.Store.SaveResume(ctx, r); err != nil {
			t.Fatal(err)
		}
		if got, err := im.Store.Resume(ctx, session.ResumeParams{Community: "c1", Pubkey: "pk", Sub: "s", Shape: "shape", Now: now}); err != nil || got == nil || got.Wrote != 8 {
			t.Fatalf("replaced: %+v %v", got, err)
		}
		if got, err := im.Store.Resume(ctx, session.ResumeParams{Community: "c1", Pubkey: "pk", Sub: "s", Shape: "shape", Now: now + 200}); got != nil || err != nil {
			t.Fatalf("an expired record was read: %+v %v", got, err)
		}
	})
}

// TestSessionStoreStampNeverGoesDownAndIsPerCommunity: the last-write
// stamp a resume record compares only rises, one community's does not
// move another's, and the mark's read carries it.
func TestSessionStoreStampNeverGoesDownAndIsPerCommunity(t *testing.T) {
	im := sessionstest.DynamoDB(t)
	ctx := context.Background()
	if w, err := im.Store.Stamp(ctx, "c1", 100); w != 100 || err != nil {
		t.Fatalf("stamp: %d %v", w, err)
	}
	if w, err := im.Store.Stamp(ctx, "c1", 90); w != 100 || err != nil {
		t.Fatalf("a lower stamp: %d %v", w, err)
	}
	if m, err := im.Store.Mark(ctx, "c1"); m.Wrote != 100 || m.Exists || err != nil {
		t.Fatalf("mark of a stamped community with no mark: %+v %v", m, err)
	}
	if _, exists, err := im.Store.RaiseMark(ctx, "c1", 50, false); exists || err != nil {
		t.Fatalf("a stamp is no mark: %v %v", exists, err)
	}
	if _, _, err := im.Store.RaiseMark(ctx, "c1", 50, true); err != nil {
		t.Fatal(err)
	}
	if m, err := im.Store.Mark(ctx, "c1"); m.Wrote != 100 || m.Value != 50 || !m.Exists || err != nil {
		t.Fatalf("mark after a raise: %+v %v", m, err)
	}
	if m, err := im.Store.Mark(ctx, "c2"); m != (session.Mark{}) || err != nil {
		t.Fatalf("another community: %+v %v", m, err)
	}
}

// TestSessionStoreMessageCounterExactUnderConcurrency: concurrent counts
// of one connection's window are each counted once; another window and
// another connection start from zero.
func TestSessionStoreMessageCounterExactUnderConcurrency(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		im.Community(t, "c1")
		const n = 20
		var wg sync.WaitGroup
		totals := make([]int64, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := im.Store.CountMessage(ctx, session.CountParams{Community: "c1", Connection: "conn=", WindowStart: 600, Window: 60})
				if err != nil {
					t.Error(err)
				}
				totals[i] = v
			}()
		}
		wg.Wait()
		slices.Sort(totals)
		for i, v := range totals {
			if v != int64(i+1) {
				t.Fatalf("totals %v: not each counted once", totals)
			}
		}
		if v, err := im.Store.CountMessage(ctx, session.CountParams{Community: "c1", Connection: "conn=", WindowStart: 660, Window: 60}); v != 1 || err != nil {
			t.Fatalf("next window: %d %v", v, err)
		}
		if v, err := im.Store.CountMessage(ctx, session.CountParams{Community: "c1", Connection: "other=", WindowStart: 600, Window: 60}); v != 1 || err != nil {
			t.Fatalf("another connection: %d %v", v, err)
		}
	})
}

// TestRegistryResumeNeverHidesAWrite: through the registry as the REQ
// path uses it, a replay is answered from its record only while nothing
// was written in the community since the answer: a write between the
// disconnect and the replay (an event, an edit, a deletion or a
// membership change alike stamp it before their commit) sends it to the
// database, a write in another community does not, an expired record or
// a replay too soon after its answer goes to the database, and a write
// that stamped within the settle before the answer leaves no record.
func TestRegistryResumeNeverHidesAWrite(t *testing.T) {
	im := sessionstest.DynamoDB(t)
	ctx := context.Background()
	reg := sessions.NewRegistry(im.Store)
	clock := time.Unix(1_000_000, 0)
	reg.SetClock(func() time.Time { return clock })
	advance := func(d time.Duration) { clock = clock.Add(d) }
	settle := time.Duration(session.ResumeSettle) * time.Second
	filters := []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"x"}}, Limit: 50}}
	since := nostr.Timestamp(clock.Unix() - 5)
	replay := []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"x"}}, Limit: 50, Since: &since}}

	write := func(community string) {
		t.Helper()
		if err := reg.RaiseMark(ctx, community, clock.Unix()); err != nil {
			t.Fatal(err)
		}
	}
	// answer plays a REQ the database answers, as subscribeLive does.
	answer := func(fs []nostr.Filter) {
		t.Helper()
		a, read, err := reg.StoreAnswer(ctx, "c1", "pk", "s", fs)
		if err != nil || a != sessions.FromDatabase {
			t.Fatalf("first answer: %v %v", a, err)
		}
		if err := reg.Answered(ctx, "c1", "pk", "s", fs, read, 0); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, fs []nostr.Filter, want sessions.Answer) {
		t.Helper()
		a, _, err := reg.StoreAnswer(ctx, "c1", "pk", "s", fs)
		if err != nil || a != want {
			t.Fatalf("%s: answer %v (%v), want %v", what, a, err, want)
		}
	}

	write("c1")
	advance(settle)
	answer(filters)
	expect("a replay before the answer had time to arrive", filters, sessions.FromDatabase)
	advance(settle)
	expect("welshman's replay (the same REQ)", filters, sessions.FromResume)
	expect("buzz's replay (since last seen - 5 s)", replay, sessions.FromResume)
	write("c2")
	expect("a replay after a write in another community", filters, sessions.FromResume)

	write("c1") // between the disconnect and the replay
	expect("a replay after a write in the community", filters, sessions.FromDatabase)
	expect("buzz's replay after a write in the community", replay, sessions.FromDatabase)

	// The database answered again right after that write: no record.
	answer(filters)
	advance(settle)
	expect("a replay of an answer read within the settle of a write", filters, sessions.FromDatabase)

	// Quiet again: a record, kept by each replay it answers, then expired.
	answer(filters)
	advance(settle)
	expect("a replay of a quiet answer", filters, sessions.FromResume)
	advance(session.ResumeFor - time.Second)
	expect("a replay within ResumeFor of the last one it answered", filters, sessions.FromResume)
	advance(session.ResumeFor)
	expect("a replay after the record expired", filters, sessions.FromDatabase)

	// Another key replaying the same REQ has no record.
	a, _, err := reg.StoreAnswer(ctx, "c1", "pk2", "s", filters)
	if err != nil || a != sessions.FromDatabase {
		t.Fatalf("another key: %v %v", a, err)
	}
}

// TestRegistryStampRaceWriteStampedWhileTheAnswerReads: a write that
// stamps the community after the answer's read of the stamp (it may commit
// after the read) makes the record useless, whatever its created_at
// (a backdated event does not move the last-commit mark).
func TestRegistryStampRaceWriteStampedWhileTheAnswerReads(t *testing.T) {
	im := sessionstest.DynamoDB(t)
	ctx := context.Background()
	reg := sessions.NewRegistry(im.Store)
	clock := time.Unix(2_000_000, 0)
	reg.SetClock(func() time.Time { return clock })
	settle := time.Duration(session.ResumeSettle) * time.Second
	filters := []nostr.Filter{{Kinds: []int{9}}}
	if err := reg.RaiseMark(ctx, "c1", clock.Unix()); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(settle)
	_, read, err := reg.StoreAnswer(ctx, "c1", "pk", "s", filters)
	if err != nil {
		t.Fatal(err)
	}
	// The write stamps now, dated long ago: the mark stays, the stamp moves.
	clock = clock.Add(time.Second)
	if err := reg.RaiseMark(ctx, "c1", 10); err != nil {
		t.Fatal(err)
	}
	if err := reg.Answered(ctx, "c1", "pk", "s", filters, read, 0); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(settle)
	if a, _, err := reg.StoreAnswer(ctx, "c1", "pk", "s", filters); err != nil || a != sessions.FromDatabase {
		t.Fatalf("a replay after a backdated write raced the answer: %v %v", a, err)
	}
}

// TestRegistryResumeOfAnAnswerFromTheMark: Buzz desktop's live REQ (since
// now, above the mark) is answered from the mark, and that answer leaves a
// record; a REQ with an older since is not covered by it, and a write at
// the REQ's since sends the replay to the database.
func TestRegistryResumeOfAnAnswerFromTheMark(t *testing.T) {
	im := sessionstest.DynamoDB(t)
	ctx := context.Background()
	reg := sessions.NewRegistry(im.Store)
	clock := time.Unix(3_000_000, 0)
	reg.SetClock(func() time.Time { return clock })
	settle := time.Duration(session.ResumeSettle) * time.Second
	if err := reg.RaiseMark(ctx, "c1", clock.Unix()); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(settle)
	s0 := nostr.Timestamp(clock.Unix())
	live := []nostr.Filter{{Kinds: []int{9}, Since: &s0}}
	a, read, err := reg.StoreAnswer(ctx, "c1", "pk", "s", live)
	if err != nil || a != sessions.FromMark {
		t.Fatalf("live REQ: %v %v", a, err)
	}
	if err := reg.Answered(ctx, "c1", "pk", "s", live, read, 0); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(settle)
	if a, _, err := reg.StoreAnswer(ctx, "c1", "pk", "s", live); err != nil || a != sessions.FromMark {
		t.Fatalf("the same REQ: %v %v", a, err)
	}
	older := s0 - nostr.Timestamp(session.ResumeSettle) // at the mark: not above it, and below the answered since
	if a, _, err := reg.StoreAnswer(ctx, "c1", "pk", "s", []nostr.Filter{{Kinds: []int{9}, Since: &older}}); err != nil || a != sessions.FromDatabase {
		t.Fatalf("an older since: %v %v", a, err)
	}
	// A write at the REQ's since moves the mark to it: the same replay is
	// no longer above the mark, and the stamp moved: the database.
	if err := reg.RaiseMark(ctx, "c1", int64(s0)); err != nil {
		t.Fatal(err)
	}
	if a, _, err := reg.StoreAnswer(ctx, "c1", "pk", "s", live); err != nil || a != sessions.FromDatabase {
		t.Fatalf("after a write at since: %v %v", a, err)
	}
}

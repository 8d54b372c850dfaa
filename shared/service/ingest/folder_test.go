package ingest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestFolderCoversCommittedEvents: a write is prepared (the sessions'
// last-commit mark raised) for at least the created_at of every event it
// commits: a relay-signed state event dated after its predecessor
// (prevAt+1, past the clock) is prepared for again, for that later time,
// inside the write's transaction (issue 36: no longer by starting over);
// done runs once the events committed, never for a refusal.
func TestFolderCoversCommittedEvents(t *testing.T) {
	h := newHarness(t)
	fixed := time.Now()
	owner := testkit.NewKey(t)
	id := h.channel(owner)
	var prepared []int64
	var folded []*store.Tx
	dones := 0
	h.svc = h.svc.WithClock(func() time.Time { return fixed }).WithFolder(
		func(_ context.Context, c string, upTo int64) (func(*store.Tx), func(context.Context), error) {
			if c != community {
				t.Errorf("prepared community %q", c)
			}
			prepared = append(prepared, upTo)
			return func(tx *store.Tx) { folded = append(folded, tx) }, func(context.Context) { dones++ }, nil
		})
	for i := range 3 {
		prepared, folded = prepared[:0], folded[:0]
		out := h.ok(owner.EventAt(t, fixed.Add(-time.Minute), 9002, "", nostr.Tag{"h", id}, nostr.Tag{"about", string(rune('a' + i))}))
		var hi int64
		for _, ev := range out.Committed {
			hi = max(hi, int64(ev.CreatedAt))
		}
		if len(prepared) == 0 || prepared[len(prepared)-1] < hi {
			t.Fatalf("edit %d: prepared for %v, committed up to %d", i, prepared, hi)
		}
		if hi > fixed.Unix() && len(prepared) != 2 {
			t.Fatalf("edit %d: a state event at %d past the clock %d, prepared %v (want a second preparation)", i, hi, fixed.Unix(), prepared)
		}
		if len(folded) != len(prepared) || folded[0] != folded[len(folded)-1] {
			t.Fatalf("edit %d: %d preparations folded into %d transactions, want one", i, len(prepared), len(slices.Compact(folded)))
		}
	}
	if dones != 3 {
		t.Fatalf("done ran %d times for 3 writes", dones)
	}
	h.refused(testkit.NewKey(t).Event(t, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"about", "x"}), "restricted:")
	if dones != 3 {
		t.Fatal("done ran for a refused write")
	}
}

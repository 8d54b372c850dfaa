package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestMarkCoversCommittedEvents: a write raises the sessions' last-commit
// mark, before its commit, to at least the created_at of every event it
// commits and no further than needed (the event's created_at, not the
// clock): a relay-signed state event dated after its predecessor (prevAt+1,
// past the clock) raises it again, for that later time, inside the write's
// transaction (issue 36: not by starting over); a refused write may raise
// it (before its rules ran) but commits nothing.
func TestMarkCoversCommittedEvents(t *testing.T) {
	h := newHarness(t)
	fixed := time.Now()
	owner := testkit.NewKey(t)
	id := h.channel(owner)
	var raised []int64
	h.svc = h.svc.WithClock(func() time.Time { return fixed }).WithMark(
		func(_ context.Context, c string, upTo int64) error {
			if c != community {
				t.Errorf("raised the mark of community %q", c)
			}
			raised = append(raised, upTo)
			return nil
		})
	for i := range 3 {
		raised = raised[:0]
		at := fixed.Add(-time.Minute)
		out := h.ok(owner.EventAt(t, at, 9002, "", nostr.Tag{"h", id}, nostr.Tag{"about", string(rune('a' + i))}))
		var hi int64
		for _, ev := range out.Committed {
			hi = max(hi, int64(ev.CreatedAt))
		}
		if len(raised) == 0 || raised[0] != at.Unix() {
			t.Fatalf("edit %d: first raised to %v, want the event's created_at %d", i, raised, at.Unix())
		}
		if raised[len(raised)-1] < hi {
			t.Fatalf("edit %d: raised to %v, committed up to %d", i, raised, hi)
		}
		if hi > fixed.Unix() && len(raised) != 2 {
			t.Fatalf("edit %d: a state event at %d past the clock %d, raised %v (want a second raise)", i, hi, fixed.Unix(), raised)
		}
	}
}

package ingest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// all submits evs at once and returns their outcomes and errors.
func (h *harness) all(evs []*nostr.Event) ([]ingest.Outcome, []error) {
	out := make([]ingest.Outcome, len(evs))
	errs := make([]error, len(evs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, ev := range evs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i], errs[i] = h.svc.Submit(context.Background(), community, ev.PubKey, ev)
		}()
	}
	close(start)
	wg.Wait()
	return out, errs
}

// TestConcurrentReplaceableKeepsNewest (issue 11 item 7): ten versions of
// one profile, or of one article address, sent at once leave one row, the
// newest.
func TestConcurrentReplaceableKeepsNewest(t *testing.T) {
	h := newHarness(t)
	k := testkit.NewKey(t)
	now := time.Now()
	for _, kind := range []int{0, 30023} {
		var evs []*nostr.Event
		for i := 0; i < 10; i++ {
			evs = append(evs, k.EventAt(t, now.Add(time.Duration(i-10)*time.Second), kind, fmt.Sprint("v", i), nostr.Tag{"d", "one"}))
		}
		_, errs := h.all(evs)
		for _, err := range errs {
			if err != nil {
				t.Fatalf("kind %d: %v", kind, err)
			}
		}
		var id string
		if err := h.db.QueryRow(context.Background(), `SELECT string_agg(id, ',') FROM events WHERE kind = $1 AND deleted_at IS NULL`, kind).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if id != evs[9].ID {
			t.Fatalf("kind %d: stored %q, want only the newest %s", kind, id, evs[9].ID)
		}
	}
	h.noOrphans()
}

// TestConcurrentModerationCopiesAreDuplicates (issue 11 item 8): copies of
// one 9022 or 9001 sent at once: one is applied, the rest are duplicate:.
func TestConcurrentModerationCopiesAreDuplicates(t *testing.T) {
	h := newHarness(t)
	owner, a, b := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ch := h.channel(owner)
	h.ok(a.Event(t, 9021, "", nostr.Tag{"h", ch}))
	h.ok(b.Event(t, 9021, "", nostr.Tag{"h", ch}))
	for _, ev := range []*nostr.Event{
		a.Event(t, 9022, "", nostr.Tag{"h", ch}),
		owner.Event(t, 9001, "", nostr.Tag{"h", ch}, nostr.Tag{"p", b.Pub}),
	} {
		copies := make([]*nostr.Event, 8)
		for i := range copies {
			copies[i] = ev
		}
		applied := 0
		outs, errs := h.all(copies)
		for i, o := range outs {
			switch {
			case o.Accepted && o.Message == "":
				applied++
			case o.Accepted && strings.HasPrefix(o.Message, "duplicate:"):
			default:
				t.Errorf("kind %d copy: accepted=%v %q (%v)", ev.Kind, o.Accepted, o.Message, errs[i])
			}
		}
		if applied != 1 {
			t.Errorf("kind %d: applied %d times", ev.Kind, applied)
		}
	}
}

// TestDeepReplyWalkIsBounded (issue 11 item 16): a reply far below the
// depth cap updates at most MaxDepth ancestors (plus the root), not every
// one above it: the first reply of a 105-deep chain counts only the
// descendants within MaxDepth levels of it.
func TestDeepReplyWalkIsBounded(t *testing.T) {
	h, k, ch := newChannelHarness(t)
	top := k.Event(t, 9, "root", nostr.Tag{"h", ch})
	h.ok(top)
	parent, first := top.ID, ""
	const chain = ingest.MaxDepth + 5
	for i := 0; i < chain; i++ {
		ev := k.Event(t, 9, fmt.Sprint(i), nostr.Tag{"h", ch}, root(top.ID), reply(parent))
		h.ok(ev)
		if first == "" {
			first = ev.ID
		}
		parent = ev.ID
	}
	if th := h.thread(top.ID); th.Descendants != chain {
		t.Fatalf("root descendant_count %d, want %d", th.Descendants, chain)
	}
	if th := h.thread(first); th.Descendants != ingest.MaxDepth {
		t.Fatalf("first reply descendant_count %d, want %d (walk bounded to MaxDepth)", th.Descendants, ingest.MaxDepth)
	}
	if th := h.thread(parent); th.Depth != ingest.MaxDepth {
		t.Fatalf("deepest reply stored at depth %d", th.Depth)
	}
}

// TestReactionsPerAuthorAreCapped (issue 11 item 14): one key keeps one

// TestDeepReplyRowsTouchedBounded: a reply at depth 1,200 of a chain
// (stored at the cap) writes at most MaxDepth+2 thread rows in its
// transaction (its own, the root, MaxDepth ancestors), and its deletion at
// most MaxDepth+1 (the root and MaxDepth ancestors), however long the
// chain above it: rows counted by the writing transaction's id (xmin).
func TestDeepReplyRowsTouchedBounded(t *testing.T) {
	h := newHarness(t)
	k := testkit.NewKey(t)
	ch := h.channel(k)
	top := k.Event(t, 9, "root", nostr.Tag{"h", ch})
	h.ok(top)
	parent := top.ID
	const chain = 1200
	for i := range chain {
		ev := k.Event(t, 9, fmt.Sprint(i), nostr.Tag{"h", ch}, root(top.ID), reply(parent))
		h.ok(ev)
		parent = ev.ID
	}
	last := k.Event(t, 9, "deepest", nostr.Tag{"h", ch}, root(top.ID), reply(parent))
	h.ok(last)
	var n int
	if err := h.db.QueryRow(context.Background(), `SELECT count(*) FROM thread_metadata
WHERE xmin = (SELECT xmin FROM thread_metadata WHERE event_id = $1)`, last.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := ingest.MaxDepth + 2; n != want {
		t.Fatalf("reply at depth %d wrote %d thread rows, want %d (itself, the root, %d ancestors)", chain+1, n, want, ingest.MaxDepth)
	}
	del := k.Event(t, 5, "", nostr.Tag{"e", last.ID})
	h.ok(del)
	if err := h.db.QueryRow(context.Background(), `SELECT count(*) FROM thread_metadata
WHERE xmin = (SELECT xmin FROM events WHERE id = $1)`, del.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := ingest.MaxDepth + 1; n > want {
		t.Fatalf("deleting the reply at depth %d wrote %d thread rows, want at most %d", chain+1, n, want)
	}
}

// reaction per content and at most MaxReactionsPerAuthor on one event.
func TestReactionsPerAuthorAreCapped(t *testing.T) {
	h := newHarness(t)
	k, fan := testkit.NewKey(t), testkit.NewKey(t)
	ch := h.channel(k)
	msg := k.Event(t, 9, "hi", nostr.Tag{"h", ch})
	h.ok(msg)
	h.ok(fan.Event(t, 7, "+", nostr.Tag{"e", msg.ID}))
	if o := h.submit(fan.Event(t, 7, "+", nostr.Tag{"e", msg.ID}, nostr.Tag{"k", "9"})); !strings.HasPrefix(o.Message, "duplicate:") {
		t.Fatalf("same reaction again: %q", o.Message)
	}
	for i := 1; i < ingest.MaxReactionsPerAuthor; i++ {
		h.ok(fan.Event(t, 7, fmt.Sprint(":e", i, ":"), nostr.Tag{"e", msg.ID}))
	}
	h.refused(fan.Event(t, 7, "one more", nostr.Tag{"e", msg.ID}), "rate-limited:")
	h.ok(k.Event(t, 7, "one more", nostr.Tag{"e", msg.ID}))
}

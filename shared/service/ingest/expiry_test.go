package ingest_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/expiry"
)

// NIP-40 at ingest: an event whose expiration is not ahead of the relay's
// clock, or is not unix seconds, is refused with invalid: and leaves
// nothing; one whose expiration is ahead is stored with it.
func TestExpiredEventRefusedAtIngest(t *testing.T) {
	h, owner, ch := newChannelHarness(t)
	now := time.Now().Unix()
	for _, v := range []string{strconv.FormatInt(now-1, 10), "1000", "soon", "-3", ""} {
		tag := nostr.Tag{"expiration", v}
		if v == "" {
			tag = nostr.Tag{"expiration"}
		}
		h.refused(owner.Event(t, 9, "hello", nostr.Tag{"h", ch}, tag), "invalid:")
		h.refused(owner.Event(t, 1, "note", tag), "invalid:")
	}
	ev := owner.Event(t, 9, "for an hour", nostr.Tag{"h", ch}, nostr.Tag{"expiration", strconv.FormatInt(now+3600, 10)})
	h.ok(ev)
	if got := h.scalar(`SELECT expires_at FROM events WHERE id = $1`, ev.ID); int64(got) != now+3600 {
		t.Errorf("stored expires_at = %d, want %d", got, now+3600)
	}
}

// The sweep deletes every expired event with its tag rows and thread row,
// in batches, and nothing else: not an event whose expiration is ahead, nor
// one without.
func TestSweepDeletesOnlyExpiredEvents(t *testing.T) {
	h, owner, ch := newChannelHarness(t)
	now := time.Now().Unix()
	ahead := nostr.Tag{"expiration", strconv.FormatInt(now+100, 10)}
	kept := owner.Event(t, 9, "kept", nostr.Tag{"h", ch})
	h.ok(kept)
	keep := kept.ID
	later := owner.Event(t, 9, "expires later", nostr.Tag{"h", ch}, nostr.Tag{"expiration", strconv.FormatInt(now+10_000, 10)})
	h.ok(later)
	var doomed []string
	for i := range 7 {
		ev := owner.Event(t, 9, "doomed "+strconv.Itoa(i), nostr.Tag{"h", ch}, nostr.Tag{"e", keep, "", "reply"}, nostr.Tag{"t", "x"}, ahead)
		h.ok(ev)
		doomed = append(doomed, ev.ID)
	}
	// The sweep runs 200 s later: the seven have expired, later has not.
	s := &expiry.Sweeper{Store: h.st, Batch: 3, Now: func() time.Time { return time.Unix(now+200, 0) }}
	r, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Deleted != 7 || r.Batches != 3 || !r.Done {
		t.Errorf("sweep = %+v, want 7 deleted in 3 batches, done", r)
	}
	for _, id := range doomed {
		if n := h.scalar(`SELECT (SELECT count(*) FROM events WHERE id = $1) + (SELECT count(*) FROM event_tags WHERE event_id = $1)
  + (SELECT count(*) FROM thread_metadata WHERE event_id = $1)`, id); n != 0 {
			t.Errorf("expired event %s left %d rows", id, n)
		}
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE id = ANY($1)`, []string{keep, later.ID}); n != 2 {
		t.Errorf("the sweep deleted an event that has not expired: %d of 2 left", n)
	}
	if r, err := s.Sweep(context.Background()); err != nil || r.Deleted != 0 || !r.Done {
		t.Errorf("a second sweep = %+v %v, want nothing to do", r, err)
	}
}

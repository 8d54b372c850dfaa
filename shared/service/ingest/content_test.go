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

func TestThreads(t *testing.T) {
	h := newHarness(t)
	owner, other := testkit.NewKey(t), testkit.NewKey(t)
	ch := h.channel(owner)
	elsewhere := h.channel(owner)
	top := owner.Event(t, 9, "top", nostr.Tag{"h", ch})
	h.ok(top)
	if th := h.thread(top.ID); th.Depth != 0 || !th.TopLevel || th.Root != "" {
		t.Fatalf("top-level message: %+v", th)
	}
	r1 := other.Event(t, 9, "reply", nostr.Tag{"h", ch}, reply(top.ID))
	h.ok(r1)
	if th := h.thread(r1.ID); th.Depth != 1 || th.Root != top.ID || th.Parent != top.ID || th.TopLevel {
		t.Fatalf("direct reply: %+v", th)
	}
	r2 := owner.Event(t, 9, "nested", nostr.Tag{"h", ch}, root(top.ID), reply(r1.ID))
	h.ok(r2)
	if th := h.thread(r2.ID); th.Depth != 2 || th.Root != top.ID || th.Parent != r1.ID {
		t.Fatalf("nested reply: %+v", th)
	}
	b := other.Event(t, 9, "broadcast", nostr.Tag{"h", ch}, reply(top.ID), nostr.Tag{"broadcast", "1"})
	h.ok(b)
	if th := h.thread(b.ID); th.Depth != 1 || !th.Broadcast || !th.TopLevel {
		t.Fatalf("broadcast reply: %+v", th)
	}
	rootOnly := other.Event(t, 9, "root marker alone", nostr.Tag{"h", ch}, root(top.ID))
	h.ok(rootOnly)
	if th := h.thread(rootOnly.ID); th.Depth != 0 || th.Parent != "" {
		t.Fatalf("root alone is not a reply: %+v", th)
	}
	th := h.thread(top.ID)
	if th.Replies != 2 || th.Descendants != 3 || th.LastReplyAt == nil {
		t.Fatalf("root counters: %+v", th)
	}
	if th := h.thread(r1.ID); th.Replies != 1 || th.Descendants != 1 {
		t.Fatalf("r1 counters: %+v", th)
	}

	h.refused(other.Event(t, 9, "x", nostr.Tag{"h", ch}, reply(strings.Repeat("a", 64))), "invalid: reply parent")
	other2 := owner.Event(t, 9, "in another channel", nostr.Tag{"h", elsewhere})
	h.ok(other2)
	h.refused(other.Event(t, 9, "x", nostr.Tag{"h", ch}, reply(other2.ID)), "invalid: reply parent")
	h.refused(other.Event(t, 9, "x", nostr.Tag{"h", ch}, root(r1.ID), reply(r2.ID)), "invalid: root tag")
	reaction := other.Event(t, 7, "+", nostr.Tag{"e", top.ID})
	h.ok(reaction)
	h.refused(other.Event(t, 9, "x", nostr.Tag{"h", ch}, reply(reaction.ID)), "invalid: reply parent")
}

func TestDepthCap(t *testing.T) {
	h, k, ch := newChannelHarness(t)
	parent := k.Event(t, 9, "0", nostr.Tag{"h", ch})
	h.ok(parent)
	first := parent.ID
	for i := 1; i <= 102; i++ {
		ev := k.Event(t, 9, fmt.Sprint(i), nostr.Tag{"h", ch}, reply(parent.ID))
		h.ok(ev)
		parent = ev
	}
	if th := h.thread(parent.ID); th.Depth != 100 || th.Root != first {
		t.Fatalf("depth %d root %s", th.Depth, th.Root)
	}
	if th := h.thread(first); th.Descendants != 102 || th.Replies != 1 {
		t.Fatalf("root counters %+v", th)
	}
}

func TestReactionsEditsDeletions(t *testing.T) {
	h := newHarness(t)
	owner, author, other := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ch := h.channel(owner)
	elsewhere := h.channel(owner)
	private := h.channel(owner, nostr.Tag{"visibility", "private"})
	msg := author.Event(t, 9, "hello", nostr.Tag{"h", ch})
	h.ok(msg)
	secret := owner.Event(t, 9, "secret", nostr.Tag{"h", private})
	h.ok(secret)

	// Reactions: last e is the target, stored in the target's channel.
	react := other.Event(t, 7, "+", nostr.Tag{"e", strings.Repeat("b", 64)}, nostr.Tag{"e", msg.ID}, nostr.Tag{"p", author.Pub})
	h.ok(react)
	if n := h.scalar(`SELECT count(*) FROM events WHERE id = $1 AND channel_id = $2`, react.ID, ch); n != 1 {
		t.Fatal("reaction not stored in its target's channel")
	}
	h.refused(other.Event(t, 7, "+"), "invalid: reaction needs an e tag")
	h.refused(other.Event(t, 7, "+", nostr.Tag{"e", strings.Repeat("c", 64)}), "invalid: reaction target")
	h.refused(other.Event(t, 7, "+", nostr.Tag{"e", "xyz"}), "invalid: reaction target")
	h.refused(other.Event(t, 7, "+", nostr.Tag{"e", msg.ID}, nostr.Tag{"h", elsewhere}), ingest.ErrReactionTarget.Error())
	h.refused(other.Event(t, 7, "+", nostr.Tag{"e", secret.ID}), ingest.ErrReactionTarget.Error())
	h.refused(other.Event(t, 7, "+", nostr.Tag{"e", strings.Repeat("c", 64)}), ingest.ErrReactionTarget.Error())

	// Edits: first e is the target, only its author.
	h.ok(author.Event(t, 40003, "hello, edited", nostr.Tag{"e", msg.ID}, nostr.Tag{"h", ch}))
	h.refused(other.Event(t, 40003, "mine now", nostr.Tag{"e", msg.ID}), ingest.ErrEditTarget.Error())
	h.refused(other.Event(t, 40003, "mine now", nostr.Tag{"e", strings.Repeat("c", 64)}), ingest.ErrEditTarget.Error())
	h.refused(author.Event(t, 40003, "x"), "invalid: edit needs an e tag")
	h.refused(author.Event(t, 40003, "x", nostr.Tag{"e", msg.ID}, nostr.Tag{"h", elsewhere}), ingest.ErrEditTarget.Error())

	// NIP-09 deletions: exactly one target, only its author.
	h.refused(author.Event(t, 5, ""), "invalid: a deletion must name exactly one target")
	h.refused(author.Event(t, 5, "", nostr.Tag{"e", msg.ID}, nostr.Tag{"e", react.ID}), "invalid: a deletion must name exactly one target")
	h.refused(other.Event(t, 5, "", nostr.Tag{"e", msg.ID}), ingest.ErrDeletionTarget.Error())
	h.refused(author.Event(t, 5, "", nostr.Tag{"e", strings.Repeat("d", 64)}), ingest.ErrDeletionTarget.Error())
	h.refused(author.Event(t, 5, "", nostr.Tag{"a", "30023:" + other.Pub + ":x"}), ingest.ErrDeletionTarget.Error())
	h.refused(author.Event(t, 5, "", nostr.Tag{"a", "nonsense"}), "invalid: a tag")
	del := other.Event(t, 5, "", nostr.Tag{"e", react.ID})
	h.ok(del)
	if n := h.scalar(`SELECT count(*) FROM events WHERE id = $1 AND deleted_at IS NOT NULL`, react.ID); n != 1 {
		t.Fatal("deleted reaction not marked")
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE id = $1 AND channel_id = $2 AND deleted_at IS NULL`, del.ID, ch); n != 1 {
		t.Fatal("the deletion itself stays readable in the target's channel")
	}

	// Deleting a reply takes it out of its thread's counters.
	r1 := other.Event(t, 9, "r1", nostr.Tag{"h", ch}, reply(msg.ID))
	r2 := author.Event(t, 9, "r2", nostr.Tag{"h", ch}, reply(r1.ID))
	h.ok(r1)
	h.ok(r2)
	h.ok(author.Event(t, 5, "", nostr.Tag{"e", r2.ID}))
	if th := h.thread(msg.ID); th.Replies != 1 || th.Descendants != 1 {
		t.Fatalf("after deleting r2: %+v", th)
	}
	if th := h.thread(r1.ID); th.Replies != 0 || th.Descendants != 0 {
		t.Fatalf("r1 after deleting r2: %+v", th)
	}

	// 9005: the author, or a channel owner/admin.
	r3 := other.Event(t, 9, "r3", nostr.Tag{"h", ch}, reply(msg.ID))
	h.ok(r3)
	h.refused(author.Event(t, 9005, "", nostr.Tag{"h", ch}, nostr.Tag{"e", r3.ID}), ingest.ErrDeletionTarget.Error())
	h.refused(owner.Event(t, 9005, "", nostr.Tag{"h", ch}), "invalid: delete-event needs at least one e tag")
	h.refused(owner.Event(t, 9005, "", nostr.Tag{"h", elsewhere}, nostr.Tag{"e", r3.ID}), ingest.ErrDeletionTarget.Error())
	h.refused(owner.Event(t, 9005, "", nostr.Tag{"h", ch}, nostr.Tag{"e", strings.Repeat("e", 64)}), ingest.ErrDeletionTarget.Error())
	h.ok(owner.Event(t, 9005, "", nostr.Tag{"h", ch}, nostr.Tag{"e", r3.ID}))
	if th := h.thread(msg.ID); th.Replies != 1 || th.Descendants != 1 {
		t.Fatalf("after moderator deletes r3: %+v", th)
	}
	h.ok(other.Event(t, 9005, "", nostr.Tag{"h", ch}, nostr.Tag{"e", r1.ID}))
	if th := h.thread(msg.ID); th.Replies != 0 || th.Descendants != 0 {
		t.Fatalf("after author deletes r1: %+v", th)
	}
	h.refused(other.Event(t, 7, "+", nostr.Tag{"e", r1.ID}), "invalid: reaction target")
}

func TestReplaceable(t *testing.T) {
	h := newHarness(t)
	k := testkit.NewKey(t)
	now := time.Now()
	old := k.EventAt(t, now.Add(-10*time.Second), 0, `{"name":"old"}`)
	newer := k.EventAt(t, now, 0, `{"name":"new"}`)
	h.ok(old)
	h.ok(newer)
	if o := h.submit(k.EventAt(t, now.Add(-5*time.Second), 0, `{"name":"stale"}`)); o.Message[:10] != "duplicate:" {
		t.Fatalf("stale profile: %q", o.Message)
	}
	if n := h.scalar(`SELECT count(*) FROM events WHERE kind = 0`); n != 1 {
		t.Fatalf("%d profiles stored, want 1", n)
	}
	h.refused(k.Event(t, 30023, "article"), "invalid: kind 30023 is addressable and needs a d tag")
	h.ok(k.EventAt(t, now.Add(-time.Second), 30023, "v1", nostr.Tag{"d", "post"}))
	h.ok(k.EventAt(t, now, 30023, "v2", nostr.Tag{"d", "post"}))
	h.ok(k.Event(t, 30023, "other", nostr.Tag{"d", "other"}))
	if n := h.scalar(`SELECT count(*) FROM events WHERE kind = 30023`); n != 2 {
		t.Fatalf("%d articles stored, want 2", n)
	}
	h.ok(k.Event(t, 5, "", nostr.Tag{"a", "30023:" + k.Pub + ":post"}))
	if n := h.scalar(`SELECT count(*) FROM events WHERE kind = 30023 AND deleted_at IS NULL`); n != 1 {
		t.Fatalf("%d articles visible after deleting one address, want 1", n)
	}
	h.noOrphans()
}

// TestConcurrentReplies sends 200 replies to one root at once (and 50 more to
// one of them): every one counts.
func TestConcurrentReplies(t *testing.T) {
	h, owner, ch := newChannelHarness(t)
	top := owner.Event(t, 9, "root", nostr.Tag{"h", ch})
	h.ok(top)
	mid := owner.Event(t, 9, "mid", nostr.Tag{"h", ch}, reply(top.ID))
	h.ok(mid)
	const direct, nested = 200, 50
	evs := make([]*nostr.Event, 0, direct+nested)
	for i := 0; i < direct; i++ {
		evs = append(evs, testkit.NewKey(t).Event(t, 9, fmt.Sprint(i), nostr.Tag{"h", ch}, reply(top.ID)))
	}
	for i := 0; i < nested; i++ {
		evs = append(evs, testkit.NewKey(t).Event(t, 9, fmt.Sprint("n", i), nostr.Tag{"h", ch}, root(top.ID), reply(mid.ID)))
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(evs))
	start := make(chan struct{})
	for _, ev := range evs {
		wg.Add(1)
		go func(ev *nostr.Event) {
			defer wg.Done()
			<-start
			if out, err := h.svc.Submit(context.Background(), community, ev.PubKey, ev); err != nil || !out.Accepted || out.Message != "" {
				errs <- fmt.Sprint(out.Message, err)
			}
		}(ev)
	}
	close(start)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent reply refused: %s", e)
	}
	th := h.thread(top.ID)
	if th.Replies != direct+1 || th.Descendants != direct+1+nested {
		t.Fatalf("root: reply_count %d (want %d), descendant_count %d (want %d)", th.Replies, direct+1, th.Descendants, direct+1+nested)
	}
	if m := h.thread(mid.ID); m.Replies != nested || m.Descendants != nested {
		t.Fatalf("mid: %+v", m)
	}
}

package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

const community = "default"

type harness struct {
	t     testing.TB
	st    *store.Store
	db    *dbtest.DB // the tables, looked at directly
	svc   *ingest.Service
	relay *signer.Key
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 16})
	key := testkit.RelayKey(t)
	return &harness{t: t, st: st, db: db, svc: ingest.New(st, key), relay: key}
}

func (h *harness) submit(ev *nostr.Event) ingest.Outcome {
	h.t.Helper()
	out, err := h.svc.Submit(context.Background(), community, ev.PubKey, ev)
	if err != nil {
		h.t.Fatalf("kind %d: %v", ev.Kind, err)
	}
	return out
}

// ok submits and requires plain acceptance.
func (h *harness) ok(ev *nostr.Event) ingest.Outcome {
	h.t.Helper()
	out := h.submit(ev)
	if !out.Accepted || out.Message != "" {
		h.t.Fatalf("kind %d: want accepted, got accepted=%v %q", ev.Kind, out.Accepted, out.Message)
	}
	return out
}

// refused submits and requires a rejection with prefix, leaving every table
// exactly as it was.
func (h *harness) refused(ev *nostr.Event, prefix string) {
	h.t.Helper()
	before := h.counts()
	out := h.submit(ev)
	if out.Accepted {
		h.t.Fatalf("kind %d: want %q, got accepted (%q)", ev.Kind, prefix, out.Message)
	}
	if !strings.HasPrefix(out.Message, prefix) {
		h.t.Fatalf("kind %d: want prefix %q, got %q", ev.Kind, prefix, out.Message)
	}
	if after := h.counts(); after != before {
		h.t.Fatalf("rejected event left a trace: before %v after %v", before, after)
	}
}

// counts is a fingerprint of every table the write path touches.
func (h *harness) counts() string {
	h.t.Helper()
	var s string
	err := h.db.QueryRow(context.Background(), `SELECT concat_ws(',',
  (SELECT count(*) FROM events), (SELECT count(*) FROM event_tags), (SELECT count(*) FROM channels),
  (SELECT count(*) FROM channel_members), (SELECT count(*) FROM thread_metadata), (SELECT count(*) FROM channel_state_heads),
  (SELECT coalesce(sum(reply_count + descendant_count), 0) FROM thread_metadata),
  (SELECT count(*) FROM events WHERE deleted_at IS NOT NULL),
  (SELECT count(*) FROM channel_members WHERE removed_at IS NULL),
  (SELECT string_agg(name || visibility || array_to_string(labels, '+'), ';' ORDER BY id) FROM channels),
  (SELECT string_agg(concat_ws('/', restricted, hidden, closed, supported_kinds, parent), ';' ORDER BY id) FROM channels),
  (SELECT count(*) FROM group_invites), (SELECT count(*) FROM group_invites WHERE revoked_at IS NOT NULL))`).Scan(&s)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// channel creates a channel owned by owner with extra tags.
func (h *harness) channel(owner testkit.Key, extra ...nostr.Tag) string {
	h.t.Helper()
	id := testkit.ChannelID()
	tags := append([]nostr.Tag{{"h", id}, {"name", "test channel"}}, extra...)
	h.ok(owner.Event(h.t, 9007, "", tags...))
	return id
}

// head returns the current relay-signed state event of kind for channel.
func (h *harness) head(channel string, kind int) *nostr.Event {
	h.t.Helper()
	var raw string
	err := h.db.QueryRow(context.Background(), `SELECT e.raw FROM channel_state_heads s
JOIN events e ON e.community_id = s.community_id AND e.id = s.event_id
WHERE s.channel_id = $1 AND s.kind = $2`, channel, kind).Scan(&raw)
	if err != nil {
		h.t.Fatalf("head %d of %s: %v", kind, channel, err)
	}
	var ev nostr.Event
	if err := ev.UnmarshalJSON([]byte(raw)); err != nil {
		h.t.Fatal(err)
	}
	if ok, _ := ev.CheckSignature(); !ok || ev.PubKey != h.relay.PublicKey() {
		h.t.Fatalf("head %d is not signed by the relay key", kind)
	}
	return &ev
}

type thread struct {
	Depth, Replies, Descendants int
	Root, Parent                string
	Broadcast, TopLevel         bool
	LastReplyAt                 *int64
}

func (h *harness) thread(id string) thread {
	h.t.Helper()
	var th thread
	var root, parent *string
	err := h.db.QueryRow(context.Background(), `SELECT m.depth, m.reply_count, m.descendant_count, m.root_id, m.parent_id, m.broadcast, e.top_level, m.last_reply_at
FROM thread_metadata m JOIN events e ON e.community_id = m.community_id AND e.id = m.event_id WHERE m.event_id = $1`, id).
		Scan(&th.Depth, &th.Replies, &th.Descendants, &root, &parent, &th.Broadcast, &th.TopLevel, &th.LastReplyAt)
	if err != nil {
		h.t.Fatalf("thread %s: %v", id, err)
	}
	if root != nil {
		th.Root = *root
	}
	if parent != nil {
		th.Parent = *parent
	}
	return th
}

func (h *harness) scalar(q string, args ...any) int {
	h.t.Helper()
	var n int
	if err := h.db.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

func hasTag(ev *nostr.Event, tag ...string) bool {
	for _, t := range ev.Tags {
		if len(t) >= len(tag) && strings.Join(t[:len(tag)], "\x00") == strings.Join(tag, "\x00") {
			return true
		}
	}
	return false
}

func reply(parent string) nostr.Tag { return nostr.Tag{"e", parent, "", "reply"} }
func root(id string) nostr.Tag      { return nostr.Tag{"e", id, "", "root"} }

// noOrphans checks that every tag row and thread row belongs to a stored
// event (the tables have no foreign keys; store.EventsDelete keeps them tidy).
func (h *harness) noOrphans() {
	h.t.Helper()
	n := h.scalar(`SELECT (SELECT count(*) FROM event_tags t WHERE NOT EXISTS (
  SELECT 1 FROM events e WHERE e.community_id = t.community_id AND e.id = t.event_id))
 + (SELECT count(*) FROM thread_metadata m WHERE NOT EXISTS (
  SELECT 1 FROM events e WHERE e.community_id = m.community_id AND e.id = m.event_id))`)
	if n != 0 {
		h.t.Fatalf("%d tag or thread rows without their event", n)
	}
}

// newChannelHarness is a fresh harness with one key and an open channel it
// owns.
func newChannelHarness(t *testing.T) (*harness, testkit.Key, string) {
	h := newHarness(t)
	owner := testkit.NewKey(t)
	return h, owner, h.channel(owner)
}

// ok2 submits and requires acceptance, with or without a message.
func (h *harness) ok2(ev *nostr.Event) ingest.Outcome {
	h.t.Helper()
	out := h.submit(ev)
	if !out.Accepted || strings.HasPrefix(out.Message, "duplicate:") {
		h.t.Fatalf("kind %d: want accepted, got accepted=%v %q", ev.Kind, out.Accepted, out.Message)
	}
	return out
}

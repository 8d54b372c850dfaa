package query

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// t0 is the fixture clock: every fixture event is created near it.
const t0 = int64(1_790_000_000)

// testHost is the hostname the fixture requests reach the community at.
const testHost = "relay.test"

type env struct {
	t     *testing.T
	ctx   context.Context
	st    *store.Store
	db    *dbtest.DB // seeding, EXPLAIN, planner settings
	relay *signer.Key
	ing   *ingest.Service
	q     *Engine
}

type user struct {
	sk, pk string
}

func newUser() user {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	return user{sk, pk}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 4})
	relay, err := signer.FromHex(nostr.GeneratePrivateKey())
	if err != nil {
		t.Fatal(err)
	}
	ing := ingest.New(st, relay).
		WithClock(func() time.Time { return time.Unix(t0+300, 0) })
	return &env{t: t, ctx: ctx, st: st, db: db, relay: relay, ing: ing, q: New(st, relay)}
}

// submit signs and submits an event through the real write path.
func (e *env) submit(u user, kind int, at int64, content string, tags ...nostr.Tag) *nostr.Event {
	e.t.Helper()
	ev := &nostr.Event{Kind: kind, CreatedAt: nostr.Timestamp(at), Content: content, Tags: nostr.Tags(tags)}
	if ev.Tags == nil {
		ev.Tags = nostr.Tags{}
	}
	if err := ev.Sign(u.sk); err != nil {
		e.t.Fatal(err)
	}
	out, err := e.ing.Submit(e.ctx, "default", u.pk, ev)
	if err != nil || !out.Accepted {
		e.t.Fatalf("submit kind %d: %s (%v)", kind, out.Message, err)
	}
	return ev
}

// newChannelEnv is a fresh environment with one key and an open channel
// it owns.
func newChannelEnv(t *testing.T) (*env, user, string) {
	e := newEnv(t)
	owner := newUser()
	return e, owner, e.channel(owner)
}

func (e *env) channel(owner user, extra ...nostr.Tag) string {
	e.t.Helper()
	id := uuid.NewString()
	tags := append([]nostr.Tag{{"h", id}, {"name", "ch-" + id[:8]}}, extra...)
	e.submit(owner, 9007, t0, "", tags...)
	return id
}

func (e *env) addMember(owner user, ch string, who user) {
	e.t.Helper()
	e.submit(owner, 9000, t0+1, "", nostr.Tag{"h", ch}, nostr.Tag{"p", who.pk})
}

func (e *env) msg(u user, ch string, at int64, content string) *nostr.Event {
	e.t.Helper()
	return e.submit(u, 9, at, content, nostr.Tag{"h", ch})
}

func (e *env) reply(u user, ch string, parent *nostr.Event, at int64, content string, broadcast bool) *nostr.Event {
	e.t.Helper()
	tags := []nostr.Tag{{"h", ch}, {"e", parent.ID, "", "reply"}}
	if broadcast {
		tags = append(tags, nostr.Tag{"broadcast", "1"})
	}
	return e.submit(u, 9, at, content, tags...)
}

func (e *env) react(u user, target *nostr.Event, at int64) *nostr.Event {
	e.t.Helper()
	return e.submit(u, 7, at, "+", nostr.Tag{"e", target.ID}, nostr.Tag{"p", target.PubKey})
}

func (e *env) del(u user, target *nostr.Event, at int64) *nostr.Event {
	e.t.Helper()
	return e.submit(u, 5, at, "", nostr.Tag{"e", target.ID})
}

// query posts body as reader and decodes the events.
func (e *env) query(reader user, body string) []*nostr.Event {
	e.t.Helper()
	raws, err := e.q.Query(e.ctx, "default", testHost, reader.pk, []byte(body))
	if err != nil {
		e.t.Fatalf("query %s: %v", body, err)
	}
	return decode(e.t, raws)
}

func decode(t *testing.T, raws []json.RawMessage) []*nostr.Event {
	t.Helper()
	out := make([]*nostr.Event, 0, len(raws))
	seen := map[string]bool{}
	for _, raw := range raws {
		ev := &nostr.Event{}
		if err := json.Unmarshal(raw, ev); err != nil {
			t.Fatalf("response event %s: %v", raw, err)
		}
		if seen[ev.ID] {
			t.Fatalf("event %s sent twice", ev.ID)
		}
		seen[ev.ID] = true
		out = append(out, ev)
	}
	return out
}

func (e *env) count(reader user, body string) int64 {
	e.t.Helper()
	n, err := e.q.Count(e.ctx, "default", reader.pk, []byte(body))
	if err != nil {
		e.t.Fatalf("count %s: %v", body, err)
	}
	return n
}

// bad asserts body is a 400 (reject.Invalid) whose message contains want.
func (e *env) bad(body, want string) {
	e.t.Helper()
	_, err := e.q.Query(e.ctx, "default", testHost, strings.Repeat("a", 64), []byte(body))
	r, ok := reject.As(err)
	if !ok || r.Prefix != reject.Invalid {
		e.t.Fatalf("query %s: want invalid, got %v", body, err)
	}
	if !strings.Contains(r.Reason, want) {
		e.t.Fatalf("query %s: message %q does not say %q", body, r.Reason, want)
	}
	_, err = e.q.Count(e.ctx, "default", strings.Repeat("a", 64), []byte(body))
	if r, ok := reject.As(err); !ok || r.Prefix != reject.Invalid {
		e.t.Fatalf("count %s: want invalid, got %v", body, err)
	}
}

func byKind(evs []*nostr.Event, kind int) []*nostr.Event {
	var out []*nostr.Event
	for _, ev := range evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func ids(evs []*nostr.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

func has(evs []*nostr.Event, id string) bool {
	for _, ev := range evs {
		if ev.ID == id {
			return true
		}
	}
	return false
}

func tagValue(ev *nostr.Event, name string) string {
	for _, t := range ev.Tags {
		if len(t) >= 2 && t[0] == name {
			return t[1]
		}
	}
	return ""
}

// bounds returns the one 39006 of a window response, checked for signature.
func (e *env) bounds(evs []*nostr.Event) (*nostr.Event, boundsJSON) {
	e.t.Helper()
	b := byKind(evs, kinds.WindowBounds)
	if len(b) != 1 {
		e.t.Fatalf("want exactly one 39006, got %d", len(b))
	}
	e.relaySigned(b[0])
	var c boundsJSON
	if err := json.Unmarshal([]byte(b[0].Content), &c); err != nil {
		e.t.Fatal(err)
	}
	return b[0], c
}

func (e *env) relaySigned(ev *nostr.Event) {
	e.t.Helper()
	if ev.PubKey != e.relay.PublicKey() {
		e.t.Fatalf("kind %d not signed by the relay key", ev.Kind)
	}
	if ok, err := ev.CheckSignature(); !ok || err != nil {
		e.t.Fatalf("kind %d: bad signature: %v", ev.Kind, err)
	}
}

func asInvalid(err error) (*reject.Error, bool) {
	r, ok := reject.As(err)
	return r, ok && r.Prefix == reject.Invalid
}

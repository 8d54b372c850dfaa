package query

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// The thread window as Buzz's bridge serves it
// (crates/buzz-relay/src/api/bridge/thread_window.rs): a filter with
// "thread_window": true, exactly one #h channel and one #e root, pages the
// root's replies newest first (down to depth_limit below the root, 1-100,
// all of them by default) with the channel window's keyset, limit, probe and
// access rule; include_aux appends the aux closure of the root and the rows;
// one relay-signed 39007 carries the bounds, its d tag Buzz's request
// binding (threadBinding). The same plan serves POST /query and a
// WebSocket REQ (Engine.ThreadWindows).

// MaxThreadWindows bounds the thread windows of one request (Buzz: four).
const MaxThreadWindows = 4

type threadWindowPlan struct {
	f       *bridgeFilter
	channel string
	root    string
	limit   int64
	depth   int64 // deepest reply served, absolute (the root is depth 0)
	kinds   []int // the row kinds, sorted, each once (the binding's form)
	cursor  *records.Cursor
	// host is the community's hostname the request reached: with the
	// reader it is part of the 39007's binding.
	host string
}

func newThreadWindowPlan(f *bridgeFilter) (*threadWindowPlan, error) {
	h, e := f.Tags["h"], f.Tags["e"]
	if len(h) != 1 {
		return nil, invalid("thread_window requires exactly one #h channel, got %d", len(h))
	}
	if len(e) != 1 || !eventcheck.LowerHex(e[0], 64) {
		return nil, invalid("thread_window requires exactly one #e root, a 64-hex event id")
	}
	if (f.Until != nil) != (f.BeforeID != "") {
		return nil, invalid("thread_window cursor requires both until and before_id, or neither")
	}
	if f.TopLevel {
		return nil, invalid("thread_window does not combine with top_level")
	}
	w := &threadWindowPlan{f: f, channel: h[0], root: e[0], limit: windowDefaultLimit, depth: relayinfo.MaxThreadDepth}
	if d := f.DepthLimit; d != nil {
		if *d < 1 || *d > relayinfo.MaxThreadDepth {
			return nil, invalid("thread_window depth_limit must be an integer from 1 to %d", relayinfo.MaxThreadDepth)
		}
		w.depth = *d
	}
	w.kinds = slices.Compact(slices.Sorted(slices.Values(f.Kinds)))
	if f.Limit != nil {
		w.limit = min(max(*f.Limit, 1), windowMaxLimit)
	}
	if f.Until != nil {
		w.cursor = &records.Cursor{CreatedAt: *f.Until, ID: f.BeforeID}
	}
	return w, nil
}

func (w *threadWindowPlan) read() *store.ThreadWindowRead {
	return &store.ThreadWindowRead{Filter: &w.f.Filter, Channel: w.channel, Root: w.root, Depth: w.depth, Cursor: w.cursor, Limit: w.limit + 1}
}

func (w *threadWindowPlan) counted() store.Countable { return w.read() }

func (w *threadWindowPlan) serve(ctx context.Context, e *Engine, s *store.Snapshot, out *output) error {
	ok, err := s.CanRead(ctx, w.channel, []string{w.channel})
	if err != nil || !ok {
		return err // not served: no rows, no bounds
	}
	// A root that is not a live event of the channel is not a served
	// window either: never sign exhaustion for it.
	if ok, err = s.RootIn(ctx, w.channel, w.root); err != nil || !ok {
		return err
	}
	rows, err := s.ThreadWindow(ctx, w.read())
	if err != nil {
		return err
	}
	hasMore := int64(len(rows)) > w.limit
	if hasMore {
		rows = rows[:w.limit] // the probe row goes no further
	}
	targets := []string{w.root}
	for _, row := range rows {
		targets = append(targets, row.ID)
		out.add(row.ID, row.Raw)
	}
	if w.f.IncludeAux {
		if err := e.auxClosure(ctx, s, targets, []string{w.channel}, out); err != nil {
			return err
		}
	}
	var next *cursorJSON
	if hasMore {
		last := rows[len(rows)-1]
		next = &cursorJSON{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	ev, err := e.threadBoundsEvent(ctx, s.Community(), w.binding(s.Reader()), w, hasMore, next)
	if err != nil {
		return err
	}
	return out.addEvent(ev)
}

type threadBoundsJSON struct {
	Version    int         `json:"version"`
	Direction  string      `json:"direction"`
	HasMore    bool        `json:"has_more"`
	NextCursor *cursorJSON `json:"next_cursor"`
}

// threadBoundsEvent signs the one 39007 of a thread window, d its request
// binding.
func (e *Engine) threadBoundsEvent(ctx context.Context, community, d string, w *threadWindowPlan, hasMore bool, next *cursorJSON) (*nostr.Event, error) {
	content, err := json.Marshal(threadBoundsJSON{Version: 1, Direction: "older", HasMore: hasMore, NextCursor: next})
	if err != nil {
		return nil, fmt.Errorf("query: encode thread window bounds: %w", err)
	}
	ev := &nostr.Event{
		Kind:      kinds.ThreadWindowBounds,
		CreatedAt: nostr.Timestamp(e.now().Unix()),
		Tags:      nostr.Tags{{"d", d}, {"h", w.channel}, {"e", w.root}},
		Content:   string(content),
	}
	if err := e.sign(ctx, community, ev); err != nil {
		return nil, fmt.Errorf("query: sign thread window bounds: %w", err)
	}
	return ev, nil
}

// binding is the request binding of w read by reader (threadBinding).
func (w *threadWindowPlan) binding(reader string) string {
	return threadBinding(w.host, reader, w.channel, w.root, w.limit, w.depth, w.kinds, w.cursor, w.f.IncludeAux)
}

// threadBinding is the 39007 d tag as Buzz computes it (buzz-core's
// thread_window Request::binding, version 1): "tw:1:" and the hex SHA-256
// of the compact JSON array ["tw", 1, "older", host, reader, channel, root,
// limit, depth, kinds, cursor, include_aux], where host is the hostname the
// community was reached at, reader the authenticated key, limit and depth
// as served (defaults filled in), kinds sorted with each once, cursor
// [created_at, id] or null. A client that sent the request can recompute
// it; a bounds event of another request, reader or host never matches.
func threadBinding(host, reader, channel, root string, limit, depth int64, rowKinds []int, cursor *records.Cursor, includeAux bool) string {
	var c any // JSON null: a head request
	if cursor != nil {
		c = []any{cursor.CreatedAt, cursor.ID}
	}
	if rowKinds == nil {
		rowKinds = []int{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // serde_json's compact form: no \u003c escapes
	// Encoding strings, integers and bools cannot fail.
	_ = enc.Encode([]any{"tw", 1, "older", host, reader, channel, root, limit, depth, rowKinds, c, includeAux})
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "tw:1:" + hex.EncodeToString(sum[:])
}

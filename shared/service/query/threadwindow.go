package query

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// The thread window as Buzz's bridge serves it
// (crates/buzz-relay/src/api/bridge/thread_window.rs): a filter with
// "thread_window": true, exactly one #h channel and one #e root, pages the
// root's replies (any depth) newest first with the channel window's keyset,
// limit, probe and access rule; include_aux appends the aux closure of the
// root and the rows; one relay-signed 39007 carries the bounds.

// MaxThreadWindows bounds the thread windows of one request (Buzz: four).
const MaxThreadWindows = 4

type threadWindowPlan struct {
	f       *bridgeFilter
	channel string
	root    string
	limit   int64
	cursor  *store.Cursor
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
	if f.TopLevel || f.DepthLimit != nil {
		return nil, invalid("thread_window does not combine with top_level or depth_limit")
	}
	w := &threadWindowPlan{f: f, channel: h[0], root: e[0], limit: windowDefaultLimit}
	if f.Limit != nil {
		w.limit = min(max(*f.Limit, 1), windowMaxLimit)
	}
	if f.Until != nil {
		w.cursor = &store.Cursor{CreatedAt: *f.Until, ID: f.BeforeID}
	}
	return w, nil
}

func (w *threadWindowPlan) read() *store.ThreadWindowRead {
	return &store.ThreadWindowRead{Filter: &w.f.Filter, Channel: w.channel, Root: w.root, Cursor: w.cursor, Limit: w.limit + 1}
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
	ev, err := e.threadBoundsEvent(ctx, s.Community(), w, hasMore, next)
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

// threadBoundsEvent signs the one 39007 of a thread window. Its d tag binds
// it to the request: "<channel>:<root>:head" or
// "<channel>:<root>:<created_at>:<id>".
func (e *Engine) threadBoundsEvent(ctx context.Context, community string, w *threadWindowPlan, hasMore bool, next *cursorJSON) (*nostr.Event, error) {
	suffix := "head"
	if c := w.cursor; c != nil {
		suffix = strconv.FormatInt(c.CreatedAt, 10) + ":" + c.ID
	}
	content, err := json.Marshal(threadBoundsJSON{Version: 1, Direction: "older", HasMore: hasMore, NextCursor: next})
	if err != nil {
		return nil, fmt.Errorf("query: encode thread window bounds: %w", err)
	}
	ev := &nostr.Event{
		Kind:      kinds.ThreadWindowBounds,
		CreatedAt: nostr.Timestamp(e.now().Unix()),
		Tags:      nostr.Tags{{"d", w.channel + ":" + w.root + ":" + suffix}, {"h", w.channel}, {"e", w.root}},
		Content:   string(content),
	}
	if err := e.sign(ctx, community, ev); err != nil {
		return nil, fmt.Errorf("query: sign thread window bounds: %w", err)
	}
	return ev, nil
}

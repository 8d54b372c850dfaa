package query

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// windowPlan is one validated top_level filter.
type windowPlan struct {
	f       *bridgeFilter
	channel string
	limit   int64
	cursor  *records.Cursor // nil: the head page
}

func newWindowPlan(f *bridgeFilter) (*windowPlan, error) {
	h := f.Tags["h"]
	if len(h) != 1 {
		return nil, invalid("top_level requires exactly one #h channel, got %d", len(h))
	}
	if (f.Until != nil) != (f.BeforeID != "") {
		return nil, invalid("top_level cursor requires both until and before_id, or neither")
	}
	w := &windowPlan{f: f, channel: h[0], limit: windowDefaultLimit}
	if f.Limit != nil {
		w.limit = min(max(*f.Limit, 1), windowMaxLimit)
	}
	if f.Until != nil {
		w.cursor = &records.Cursor{CreatedAt: *f.Until, ID: f.BeforeID}
	}
	return w, nil
}

// read is the window's row read, with one probe row past the limit.
func (w *windowPlan) read() *store.WindowRead {
	return &store.WindowRead{Filter: &w.f.Filter, Channel: w.channel, Cursor: w.cursor, Limit: w.limit + 1}
}

func (w *windowPlan) serve(ctx context.Context, e *Engine, s *store.Snapshot, out *output) error {
	// The community row mode, read with the access check in the snapshot
	// the rows come from, decides the row predicate before the limit and
	// the probe, and is echoed in the 39006.
	ok, replies, err := s.CanReadWindow(ctx, w.channel)
	if err != nil || !ok {
		return err // a channel the caller cannot read: no rows, no overlays
	}
	read := w.read()
	read.Replies = replies
	rows, err := s.Window(ctx, read)
	if err != nil {
		return err
	}
	// The probe row proves has_more and goes no further: never sent, never
	// summarized, never closed over.
	hasMore := int64(len(rows)) > w.limit
	if hasMore {
		rows = rows[:w.limit]
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = row.ID
		out.add(row.ID, row.Raw)
	}
	if w.f.IncludeAux {
		if err := e.auxClosure(ctx, s, ids, []string{w.channel}, out); err != nil {
			return err
		}
	}
	if w.f.IncludeSummaries {
		sums, err := s.Summaries(ctx, ids)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if sum, ok := sums[id]; ok {
				ev, err := e.summaryEvent(ctx, s.Community(), w.channel, sum)
				if err != nil {
					return err
				}
				if err := out.addEvent(ev); err != nil {
					return err
				}
			}
		}
	}
	var next *cursorJSON
	if hasMore {
		last := rows[len(rows)-1]
		next = &cursorJSON{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	ev, err := e.boundsEvent(ctx, s.Community(), w, boundsJSON{HasMore: hasMore, NextCursor: next, ThreadRepliesInChannel: replies})
	if err != nil {
		return err
	}
	return out.addEvent(ev)
}

type cursorJSON struct {
	CreatedAt int64  `json:"created_at"`
	ID        string `json:"id"`
}

type boundsJSON struct {
	HasMore    bool        `json:"has_more"`
	NextCursor *cursorJSON `json:"next_cursor"`
	// ThreadRepliesInChannel echoes the community row mode the page was
	// computed under (NIP-CW): a cursor from one mode is not for the other.
	ThreadRepliesInChannel bool `json:"thread_replies_in_channel"`
}

// boundsEvent signs the one 39006 of a window response. Its d tag echoes the
// request cursor: "<channel>:head" or "<channel>:<created_at>:<id>".
func (e *Engine) boundsEvent(ctx context.Context, community string, w *windowPlan, b boundsJSON) (*nostr.Event, error) {
	suffix := "head"
	if c := w.cursor; c != nil {
		suffix = strconv.FormatInt(c.CreatedAt, 10) + ":" + c.ID
	}
	content, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("query: encode window bounds: %w", err)
	}
	ev := &nostr.Event{
		Kind:      kinds.WindowBounds,
		CreatedAt: nostr.Timestamp(e.now().Unix()),
		Tags:      nostr.Tags{{"d", w.channel + ":" + suffix}, {"h", w.channel}},
		Content:   string(content),
	}
	if err := e.sign(ctx, community, ev); err != nil {
		return nil, fmt.Errorf("query: sign window bounds: %w", err)
	}
	return ev, nil
}

// counted is the read COUNT counts: every top-level row of the channel,
// when readable, past any limit.
func (w *windowPlan) counted() store.Countable { return w.read() }

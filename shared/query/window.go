package query

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nbd-wtf/go-nostr"
)

// Relay-signed overlay kinds of the channel window; synthesized at query
// time, never stored.
const (
	KindThreadSummary = 39005
	KindWindowBounds  = 39006
)

// windowPlan is one validated top_level filter.
type windowPlan struct {
	f         *filter
	channel   string
	limit     int64
	hasCursor bool
	until     int64
	beforeID  string
}

func newWindowPlan(f *filter) (*windowPlan, error) {
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
		w.hasCursor, w.until, w.beforeID = true, *f.Until, f.BeforeID
	}
	return w, nil
}

// topLevel is the spec's top-level predicate on events e: no thread
// metadata (depth IS NULL), depth 0, or a broadcast depth-1 reply.
const topLevel = `NOT EXISTS (SELECT 1 FROM thread_metadata tm
    WHERE tm.community_id = e.community_id AND tm.event_id = e.id
      AND tm.depth > 0 AND NOT (tm.depth = 1 AND tm.broadcast))`

// where is the window's row predicate on events e: the channel, top-level,
// not deleted, every constraint of the filter and the cursor, before any
// limit.
func (w *windowPlan) where(b *sqlb) (string, bool) {
	f := w.f
	if (f.Kinds != nil && len(f.Kinds) == 0) || (f.Authors != nil && len(f.Authors) == 0) || (f.IDs != nil && len(f.IDs) == 0) {
		return "", false
	}
	conds := []string{
		"e.community_id = " + pCommunity,
		"e.channel_id = " + b.arg(w.channel),
		topLevel,
		"e.deleted_at IS NULL",
		notRowKinds,
	}
	var kinds string
	if f.Kinds != nil {
		kinds = b.arg(f.Kinds)
		conds = append(conds, "e.kind = ANY("+kinds+"::integer[])")
	}
	if f.Authors != nil {
		conds = append(conds, "e.pubkey = ANY("+b.arg(f.Authors)+"::text[])")
	}
	if f.IDs != nil {
		conds = append(conds, "e.id = ANY("+b.arg(f.IDs)+"::text[])")
	}
	if f.Since != nil {
		conds = append(conds, "e.created_at >= "+b.arg(*f.Since))
	}
	// Every other constraint of the filter (tags, search) applies before
	// the limit too; #h is the window's one channel, matched above.
	more, ok := tagAndSearch(b, f.without("h"), kinds)
	if !ok {
		return "", false
	}
	conds = append(conds, more...)
	if w.hasCursor {
		conds = append(conds, keyset(b, w.until, w.beforeID))
	}
	return and(conds), true
}

type windowRow struct {
	id, raw   string
	createdAt int64
}

func (w *windowPlan) serve(ctx context.Context, r *reader, out *output) error {
	ok, err := r.canRead(ctx, w.channel, []string{w.channel})
	if err != nil || !ok {
		return err // a channel the caller cannot read: no rows, no overlays
	}
	var rows []windowRow
	b := newSQL(r.community, r.pubkey)
	if cond, ok := w.where(b); ok {
		q := "SELECT e.id, e.raw, e.created_at FROM events e\nWHERE " + cond +
			"\nORDER BY e.created_at DESC, e.id ASC LIMIT " + b.arg(w.limit+1)
		res, err := r.query(ctx, q, b.args...)
		if err != nil {
			return fmt.Errorf("query: window rows: %w", err)
		}
		for res.Next() {
			var row windowRow
			if err := res.Scan(&row.id, &row.raw, &row.createdAt); err != nil {
				res.Close()
				return fmt.Errorf("query: window rows: %w", err)
			}
			rows = append(rows, row)
		}
		res.Close()
		if err := res.Err(); err != nil {
			return fmt.Errorf("query: window rows: %w", err)
		}
	}
	// The probe row proves has_more and goes no further: never sent, never
	// summarized, never closed over.
	hasMore := int64(len(rows)) > w.limit
	if hasMore {
		rows = rows[:w.limit]
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = row.id
		out.add(row.id, row.raw)
	}
	if w.f.IncludeAux {
		if err := r.auxClosure(ctx, ids, []string{w.channel}, out); err != nil {
			return err
		}
	}
	if w.f.IncludeSummaries {
		sums, err := r.summaries(ctx, ids)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if s, ok := sums[id]; ok {
				ev, err := r.e.summaryEvent(ctx, r.community, w.channel, s)
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
		next = &cursorJSON{CreatedAt: last.createdAt, ID: last.id}
	}
	ev, err := r.e.boundsEvent(ctx, r.community, w, hasMore, next)
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
}

// boundsEvent signs the one 39006 of a window response. Its d tag echoes the
// request cursor: "<channel>:head" or "<channel>:<created_at>:<id>".
func (e *Engine) boundsEvent(ctx context.Context, community string, w *windowPlan, hasMore bool, next *cursorJSON) (*nostr.Event, error) {
	suffix := "head"
	if w.hasCursor {
		suffix = strconv.FormatInt(w.until, 10) + ":" + w.beforeID
	}
	content, err := json.Marshal(boundsJSON{HasMore: hasMore, NextCursor: next})
	if err != nil {
		return nil, fmt.Errorf("query: encode window bounds: %w", err)
	}
	ev := &nostr.Event{
		Kind:      KindWindowBounds,
		CreatedAt: nostr.Timestamp(e.now().Unix()),
		Tags:      nostr.Tags{{"d", w.channel + ":" + suffix}, {"h", w.channel}},
		Content:   string(content),
	}
	if err := e.sign(ctx, community, ev); err != nil {
		return nil, fmt.Errorf("query: sign window bounds: %w", err)
	}
	return ev, nil
}

// idSQL selects every top-level row id of the channel (COUNT), when readable.
func (w *windowPlan) idSQL(b *sqlb) (string, bool) {
	cond, ok := w.where(b)
	if !ok {
		return "", false
	}
	return "SELECT e.id FROM events e WHERE " + cond + "\n  AND " + channelReadable(b, b.arg(w.channel), b.arg([]string{w.channel})), true
}

package store

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
)

// notRowKinds is the fixed predicate every window read carries, spelled
// from kinds.NotRowKinds; the events_window partial index
// (its newest definition, migrations/010) has the same text, so the planner can
// prove the index applies. Aux kinds and relay-signed state are never
// timeline rows.
var notRowKinds = "e.kind <> ALL ('{" + sqlInts(kinds.NotRowKinds(), ",") + "}'::integer[])"

// topLevel is the spec's top-level predicate on events e: no thread
// metadata (depth IS NULL), depth 0, or a broadcast depth-1 reply.
const topLevel = `NOT EXISTS (SELECT 1 FROM thread_metadata tm
    WHERE tm.community_id = e.community_id AND tm.event_id = e.id
      AND tm.depth > 0 AND NOT (tm.depth = 1 AND tm.broadcast))`

// WindowRead is the row read of one channel window
// (spec/bridge-channel-window.md): top-level rows of Channel, newest first,
// strictly after Cursor when set.
type WindowRead struct {
	Filter  *filter.Filter // every constraint but #h (the window's channel)
	Channel string
	Cursor  *records.Cursor
	Limit   int64 // rows to read, the has_more probe included
	// Replies is NIP-CW's community row mode thread_replies_in_channel
	// (Snapshot.ThreadRepliesInChannel): replies at any depth are rows too.
	Replies bool
}

// where is the window's row predicate on events e: the channel, top-level,
// not deleted, every constraint of the filter and the cursor, before any
// limit.
func (w *WindowRead) where(b *sqlb) (string, bool) {
	// Every other constraint of the filter (tags, search) applies before
	// the limit too; #h is the window's one channel, matched here.
	f := w.Filter.Without("h")
	if f.Empty() {
		return "", false
	}
	rows := ""
	if !w.Replies {
		rows = topLevel
	}
	return windowWhere(b, f, w.Channel, rows, w.Cursor), true
}

// windowWhere is the keyset window's row predicate on events e, shared by
// the channel window, the thread window and its root probe: the channel,
// the window's own row predicate (rows; "" for none), not deleted, never a
// not-row kind, every constraint of f and the cursor, and the access rule
// on each event, all before any limit. The rule is access.MayRead of the
// channel, then access.MaySee of each event (the access case table's
// maySeeInWindow, in shared/domain/access's tests, is its oracle):
// every statement of a window holds or follows in its snapshot MayRead of
// the channel (CanReadWindow, CanRead, or mayReadSQL in a COUNT), so each
// row takes the reader gates of its kind (maySeeReadableSQL): Buzz's
// author-only, shared-gated and #p-gated kinds filed in the channel stay
// their author's or recipient's.
func windowWhere(b *sqlb, f *filter.Filter, channel, rows string, cursor *records.Cursor) string {
	conds := []string{
		"e.community_id = " + pCommunity,
		"e.channel_id = " + b.arg(channel),
	}
	if rows != "" {
		conds = append(conds, rows)
	}
	conds = append(conds, "e."+notDeleted, notRowKinds)
	more, kinds := fields(b, f)
	conds = append(conds, more...)
	if f.Since != nil {
		conds = append(conds, "e.created_at >= "+b.arg(*f.Since))
	}
	conds = append(conds, tagAndSearch(b, f, kinds)...)
	if cursor != nil {
		conds = append(conds, keyset(b, *cursor))
	}
	if gate := maySeeReadableSQL(b, f.Kinds); gate != "" {
		conds = append(conds, gate)
	}
	return and(conds)
}

// Window returns the window's rows. The caller checks CanRead of the
// channel first: a channel the reader cannot read has no rows, and no
// overlays either.
func (s *Snapshot) Window(ctx context.Context, w *WindowRead) ([]records.Row, error) {
	b := s.sql()
	cond, ok := w.where(b)
	if !ok {
		return nil, nil
	}
	return s.rows(ctx, "window rows", rowsSQL(cond, "", b.arg(w.Limit)), b.args)
}

// idSQL selects every top-level row id of the channel (COUNT), when readable.
func (w *WindowRead) idSQL(b *sqlb) (string, bool) {
	cond, ok := w.where(b)
	if !ok {
		return "", false
	}
	return "SELECT e.id FROM events e WHERE " + cond + "\n  AND " + mayReadSQL(b, b.arg(w.Channel), b.arg([]string{w.Channel})), true
}

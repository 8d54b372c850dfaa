package store

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/records"
)

// ThreadWindowRead is the row read of one NIP-CW thread window (Buzz's
// bridge thread_window): the replies of Root in Channel down to Depth, newest
// first, strictly after Cursor when set, with the window's own keyset and
// not-row kinds.
type ThreadWindowRead struct {
	Filter  *filter.Filter // every constraint but #h (the channel) and #e (the root)
	Channel string
	Root    string
	Depth   int64 // the deepest reply read (thread_metadata.depth; the root is 0)
	Cursor  *records.Cursor
	Limit   int64 // rows to read, the has_more probe included
}

func (w *ThreadWindowRead) where(b *sqlb) (string, bool) {
	f := w.Filter.Without("h").Without("e")
	if f.Empty() {
		return "", false
	}
	root := `e.id IN (SELECT tm.event_id FROM thread_metadata tm
    WHERE tm.community_id = ` + pCommunity + ` AND tm.root_id = ` + b.arg(w.Root) +
		` AND tm.depth <= ` + b.arg(w.Depth) + `)`
	return windowWhere(b, f, w.Channel, root, w.Cursor), true
}

// rootWhere is the thread window's root probe on events e: root is a live
// row of channel the reader may see, the window's own predicate on that one
// id, so a thread window on an event the reader may not see answers as one
// on an id nothing stored.
func rootWhere(b *sqlb, channel, root string) string {
	return windowWhere(b, &filter.Filter{IDs: []string{root}}, channel, "", nil)
}

// RootIn reports whether root is a live row of channel the reader may see
// (rootWhere): a thread window of any other root is not served.
func (s *Snapshot) RootIn(ctx context.Context, channel, root string) (bool, error) {
	b := s.sql()
	var ok bool
	err := s.queryRow(ctx, "SELECT EXISTS (SELECT 1 FROM events e WHERE "+rootWhere(b, channel, root)+")", b.args...).Scan(&ok)
	if err != nil {
		return false, errorf("thread root %s: %w", root, err)
	}
	return ok, nil
}

// ThreadWindow returns the thread window's rows. The caller checks CanRead
// of the channel and RootIn first.
func (s *Snapshot) ThreadWindow(ctx context.Context, w *ThreadWindowRead) ([]records.Row, error) {
	b := s.sql()
	cond, ok := w.where(b)
	if !ok {
		return nil, nil
	}
	q := "SELECT e.id, e.raw, e.created_at FROM events e\nWHERE " + cond +
		"\nORDER BY e.created_at DESC, e.id ASC LIMIT " + b.arg(w.Limit)
	return s.rows(ctx, "thread window rows", q, b.args)
}

// idSQL selects every reply row of the thread (COUNT), when the channel is
// readable and the root passes the probe the rows are served after
// (RootIn): a COUNT of a root the reader may not see is a COUNT of an
// unknown root.
func (w *ThreadWindowRead) idSQL(b *sqlb) (string, bool) {
	cond, ok := w.where(b)
	if !ok {
		return "", false
	}
	return "SELECT e.id FROM events e WHERE " + cond + "\n  AND " + mayReadSQL(b, b.arg(w.Channel), b.arg([]string{w.Channel})) +
		"\n  AND EXISTS (SELECT 1 FROM events e WHERE " + rootWhere(b, w.Channel, w.Root) + ")", true
}

package query

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// threadPlan is one validated thread-panel filter: depth_limit with exactly
// one #e (the root). Replies come oldest first by (created_at, id), strictly
// after thread_cursor / thread_cursor_id.
type threadPlan struct {
	f          *bridgeFilter
	root       string
	depthLimit int64
	limit      int64
	cursor     *store.ThreadCursor // nil = from the start (absent or -1)
}

func newThreadPlan(f *bridgeFilter) (*threadPlan, error) {
	e := f.Tags["e"]
	if len(e) != 1 {
		return nil, invalid("depth_limit requires exactly one #e (the thread root), got %d", len(e))
	}
	root, ok := filter.Hex64(e[0])
	if !ok {
		return nil, invalid("#e must be the 64-hex id of the thread root")
	}
	if f.ThreadCursorID != "" && f.ThreadCursor == nil {
		return nil, invalid("thread_cursor_id requires thread_cursor")
	}
	t := &threadPlan{f: f, root: root, depthLimit: *f.DepthLimit, limit: threadDefaultLimit}
	if f.Limit != nil {
		t.limit = min(max(*f.Limit, 1), threadMaxLimit)
	}
	if f.ThreadCursor != nil && *f.ThreadCursor >= 0 {
		t.cursor = &store.ThreadCursor{CreatedAt: *f.ThreadCursor, ID: f.ThreadCursorID}
	}
	return t, nil
}

// read is the thread's reply read; depth_limit is capped to fit the depth
// column.
func (t *threadPlan) read() *store.ThreadRead {
	return &store.ThreadRead{Filter: &t.f.Filter, Root: t.root, Depth: min(t.depthLimit, maxDepthLimit), Limit: t.limit, Cursor: t.cursor}
}

func (t *threadPlan) serve(ctx context.Context, e *Engine, s *store.Snapshot, out *output) error {
	channel, depth, ok, err := s.ThreadRoot(ctx, t.root, t.f.Tags["h"])
	if err != nil || !ok {
		return err
	}
	if ok, err := s.CanRead(ctx, channel, t.f.Tags["h"]); err != nil || !ok {
		return err
	}
	rows, err := s.Thread(ctx, t.read(), channel, depth)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(rows)+1)
	for _, r := range rows {
		ids = append(ids, r.ID)
		out.add(r.ID, r.Raw)
	}
	if t.f.IncludeAux {
		// The root is a target too: its reactions, edits and deletions.
		return e.auxClosure(ctx, s, append(ids, t.root), []string{channel}, out)
	}
	return nil
}

// counted is the read COUNT counts: every reply the reader may read, the
// root's depth and channel read in SQL instead of up front.
func (t *threadPlan) counted() store.Countable { return t.read() }

package query

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// threadPlan is one validated thread-panel filter: depth_limit with exactly
// one #e (the root). Replies come oldest first by (created_at, id), strictly
// after thread_cursor / thread_cursor_id.
type threadPlan struct {
	f          *filter
	root       string
	depthLimit int64
	limit      int64
	// cursor; hasCursor false = from the start (absent or -1)
	hasCursor bool
	cursorTS  int64
	cursorID  string // "" = timestamp-only cursor
}

func newThreadPlan(f *filter) (*threadPlan, error) {
	e := f.Tags["e"]
	if len(e) != 1 {
		return nil, invalid("depth_limit requires exactly one #e (the thread root), got %d", len(e))
	}
	if !isHex64(e[0]) {
		return nil, invalid("#e must be the 64-hex id of the thread root")
	}
	if f.ThreadCursorID != "" && f.ThreadCursor == nil {
		return nil, invalid("thread_cursor_id requires thread_cursor")
	}
	t := &threadPlan{f: f, root: strings.ToLower(e[0]), depthLimit: *f.DepthLimit, limit: threadDefaultLimit}
	if f.Limit != nil {
		t.limit = min(max(*f.Limit, 1), threadMaxLimit)
	}
	if f.ThreadCursor != nil && *f.ThreadCursor >= 0 {
		t.hasCursor, t.cursorTS, t.cursorID = true, *f.ThreadCursor, f.ThreadCursorID
	}
	return t, nil
}

// where is the replies predicate on thread_metadata tm joined to events e,
// for a root in channel at rootDepth.
func (t *threadPlan) where(b *sqlb, channel string, rootDepth int64) (string, bool) {
	if h, ok := t.f.Tags["h"]; ok && !contains(h, channel) {
		return "", false
	}
	return t.replies(b, b.arg(rootDepth+t.depth()))
}

// depth is depth_limit, capped to fit the depth column.
func (t *threadPlan) depth() int64 { return min(t.depthLimit, maxDepthLimit) }

// replies is the one thread predicate the rows and COUNT share: the root's
// replies down to depth maxDepth (an SQL expression), not deleted,
// and every constraint of the filter (kinds, authors, since, until, cursor).
// false = the filter matches nothing.
func (t *threadPlan) replies(b *sqlb, maxDepth string) (string, bool) {
	f := t.f
	if (f.Kinds != nil && len(f.Kinds) == 0) || (f.Authors != nil && len(f.Authors) == 0) {
		return "", false
	}
	conds := []string{
		"tm.community_id = " + pCommunity,
		"tm.root_id = " + b.arg(t.root),
		"tm.depth <= " + maxDepth,
		"e.deleted_at IS NULL",
	}
	if f.Kinds != nil {
		conds = append(conds, "e.kind = ANY("+b.arg(f.Kinds)+"::integer[])")
	}
	if f.Authors != nil {
		conds = append(conds, "e.pubkey = ANY("+b.arg(f.Authors)+"::text[])")
	}
	if f.Since != nil {
		conds = append(conds, "tm.created_at >= "+b.arg(*f.Since))
	}
	if f.Until != nil {
		conds = append(conds, "tm.created_at <= "+b.arg(*f.Until))
	}
	if t.hasCursor {
		if t.cursorID != "" {
			conds = append(conds, "(tm.created_at, tm.event_id) > ("+b.arg(t.cursorTS)+", "+b.arg(t.cursorID)+"::text)")
		} else {
			conds = append(conds, "tm.created_at > "+b.arg(t.cursorTS))
		}
	}
	return and(conds), true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// rootOf returns the root's channel and depth; ok false for an unknown root.
func (r *reader) rootOf(ctx context.Context, root string) (channel string, depth int64, ok bool, err error) {
	err = r.queryRow(ctx, `SELECT channel_id, depth FROM thread_metadata WHERE community_id = $1 AND event_id = $2`,
		r.community, root).Scan(&channel, &depth)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("query: thread root: %w", err)
	}
	return channel, depth, true, nil
}

func (t *threadPlan) serve(ctx context.Context, r *reader, out *output) error {
	channel, depth, ok, err := r.rootOf(ctx, t.root)
	if err != nil || !ok {
		return err
	}
	if ok, err := r.canRead(ctx, channel, t.f.Tags["h"]); err != nil || !ok {
		return err
	}
	b := newSQL(r.community, r.pubkey)
	cond, ok := t.where(b, channel, depth)
	if !ok {
		return nil
	}
	q := "SELECT e.id, e.raw FROM thread_metadata tm\nJOIN events e ON e.community_id = tm.community_id AND e.id = tm.event_id\nWHERE " +
		cond + "\nORDER BY tm.created_at ASC, tm.event_id ASC LIMIT " + b.arg(t.limit)
	rows, err := r.query(ctx, q, b.args...)
	if err != nil {
		return fmt.Errorf("query: thread replies: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return fmt.Errorf("query: thread replies: %w", err)
		}
		ids = append(ids, id)
		out.add(id, raw)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query: thread replies: %w", err)
	}
	if t.f.IncludeAux {
		// The root is a target too: its reactions, edits and deletions.
		return r.auxClosure(ctx, append(ids, t.root), []string{channel}, out)
	}
	return nil
}

// idSQL selects every reply id of the thread the reader may read (COUNT):
// the same predicate as the rows, with the root's depth and channel read in
// SQL instead of up front.
func (t *threadPlan) idSQL(b *sqlb) (string, bool) {
	maxDepth := "(SELECT r.depth FROM thread_metadata r WHERE r.community_id = " + pCommunity + " AND r.event_id = " + b.arg(t.root) + ") + " + b.arg(t.depth())
	cond, ok := t.replies(b, maxDepth)
	if !ok {
		return "", false
	}
	conds := []string{cond, channelReadable(b, "tm.channel_id", b.arg(nonNil(t.f.Tags["h"])))}
	if h, ok := t.f.Tags["h"]; ok {
		conds = append(conds, "tm.channel_id = ANY("+b.arg(h)+"::text[])")
	}
	return "SELECT e.id FROM thread_metadata tm JOIN events e ON e.community_id = tm.community_id AND e.id = tm.event_id WHERE " + and(conds), true
}

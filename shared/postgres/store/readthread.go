package store

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/records"
)

// ThreadRead is the reply read of one thread panel: the replies of Root
// down to Depth levels below it, oldest first by (created_at, id), strictly
// after Cursor when set.
type ThreadRead struct {
	// Filter's kinds, authors, since, until and #h apply; #e is the root.
	Filter *filter.Filter
	Root   string
	Depth  int64 // depth_limit, capped to fit the depth column
	Limit  int64
	Cursor *ThreadCursor
}

// ThreadCursor is a thread panel position: strictly after (CreatedAt, ID),
// or after CreatedAt when ID is "".
type ThreadCursor struct {
	CreatedAt int64
	ID        string
}

// replies is the one thread predicate the rows and COUNT share: the root's
// replies down to depth maxDepth (an SQL expression), not deleted, timeline
// rows only (as in the windows), every constraint of the filter (kinds,
// authors, since, until, cursor), and the reader gates of each reply's kind
// (maySeeReadableSQL: the rows follow CanRead of the root's channel, the
// COUNT holds mayReadSQL), on thread_metadata tm joined to events e. false =
// the filter matches nothing.
func (t *ThreadRead) replies(b *sqlb, maxDepth string) (string, bool) {
	f := t.Filter
	if (f.Kinds != nil && len(f.Kinds) == 0) || (f.Authors != nil && len(f.Authors) == 0) {
		return "", false
	}
	conds := []string{
		"tm.community_id = " + pCommunity,
		"tm.root_id = " + b.arg(t.Root),
		"tm.depth <= " + maxDepth,
		"e." + notDeleted,
		notRowKinds,
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
	if c := t.Cursor; c != nil {
		if c.ID != "" {
			conds = append(conds, "(tm.created_at, tm.event_id) > ("+b.arg(c.CreatedAt)+", "+b.arg(c.ID)+"::text)")
		} else {
			conds = append(conds, "tm.created_at > "+b.arg(c.CreatedAt))
		}
	}
	if gate := maySeeReadableSQL(b, f.Kinds); gate != "" {
		conds = append(conds, gate)
	}
	return and(conds), true
}

// threadRootFrom is the thread panel's root probe, the FROM and WHERE of
// root's thread row tm joined to its event e: a timeline row the reader may
// see through a filter naming the channels named (maySeeSQL), so that a
// thread of a root the reader may not see answers as one of an unknown root.
func threadRootFrom(b *sqlb, root string, named []string) string {
	return threadFrom + "WHERE tm.community_id = " + pCommunity + " AND tm.event_id = " + b.arg(root) +
		"\n  AND " + notRowKinds + "\n  AND " + maySeeSQL(b, named, nil, nil)
}

// ThreadRoot returns the channel and depth of a thread root the reader may
// see through a filter naming the channels named (threadRootFrom); ok false
// for an unknown root and for one the reader may not see alike.
func (s *Snapshot) ThreadRoot(ctx context.Context, root string, named []string) (channel string, depth int64, ok bool, err error) {
	b := s.sql()
	err = s.queryRow(ctx, "SELECT tm.channel_id, tm.depth "+threadRootFrom(b, root, named), b.args...).Scan(&channel, &depth)
	if notFound(err) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, errorf("thread root: %w", err)
	}
	return channel, depth, true, nil
}

const threadFrom = "FROM thread_metadata tm\nJOIN events e ON e.community_id = tm.community_id AND e.id = tm.event_id\n"

// Thread returns the replies of a root stored in channel at rootDepth (see
// ThreadRoot). The caller checks CanRead of the channel first.
func (s *Snapshot) Thread(ctx context.Context, t *ThreadRead, channel string, rootDepth int64) ([]records.Row, error) {
	if h, ok := t.Filter.Tags["h"]; ok && !slices.Contains(h, channel) {
		return nil, nil
	}
	b := s.sql()
	cond, ok := t.replies(b, b.arg(rootDepth+t.Depth))
	if !ok {
		return nil, nil
	}
	q := "SELECT e.id, e.raw, e.created_at " + threadFrom + "WHERE " +
		cond + "\nORDER BY tm.created_at ASC, tm.event_id ASC LIMIT " + b.arg(t.Limit)
	return s.rows(ctx, "thread replies", q, b.args)
}

// idSQL selects every reply id of the thread the reader may read (COUNT):
// the same predicate as the rows, with the root's depth and channel read in
// SQL instead of up front, the depth through the same root probe
// (threadRootFrom: NULL, so no reply, for a root the reader may not see).
func (t *ThreadRead) idSQL(b *sqlb) (string, bool) {
	h, named := t.Filter.Tags["h"]
	maxDepth := "(SELECT tm.depth " + threadRootFrom(b, t.Root, h) + ") + " + b.arg(t.Depth)
	cond, ok := t.replies(b, maxDepth)
	if !ok {
		return "", false
	}
	conds := []string{cond, mayReadSQL(b, "tm.channel_id", b.arg(nonNil(h)))}
	if named {
		conds = append(conds, "tm.channel_id = ANY("+b.arg(h)+"::text[])")
	}
	return "SELECT e.id " + threadFrom + "WHERE " + and(conds), true
}

// threadSQL reads the thread counters of the roots in $2 with their
// participants: up to 10 distinct authors from the newest 1000
// replies (deleted ones included), most recent first. The newest replies come
// off thread_metadata_root backwards.
const threadSQL = `
SELECT m.event_id, m.channel_id, m.reply_count, m.descendant_count, m.last_reply_at,
  ARRAY(
    SELECT a.pubkey FROM (
      SELECT r.pubkey, max(r.created_at) AS last FROM (
        SELECT e.pubkey, tm.created_at
        FROM thread_metadata tm
        JOIN events e ON e.community_id = tm.community_id AND e.id = tm.event_id
        WHERE tm.community_id = m.community_id AND tm.root_id = m.event_id
        ORDER BY tm.created_at DESC, tm.event_id DESC
        LIMIT 1000
      ) r
      GROUP BY r.pubkey
      ORDER BY last DESC, r.pubkey
      LIMIT 10
    ) a
    ORDER BY a.last DESC, a.pubkey
  ) AS participants
FROM thread_metadata m
WHERE m.community_id = $1 AND m.event_id = ANY($2::text[])`

// summarySQL is threadSQL for the roots that have replies (the window's
// summaries).
const summarySQL = threadSQL + `
  AND (m.reply_count > 0 OR m.descendant_count > 0)`

func scanSummaries(res pgx.Rows) (map[string]*records.Summary, error) {
	defer res.Close()
	out := map[string]*records.Summary{}
	for res.Next() {
		s := &records.Summary{}
		if err := res.Scan(&s.Root, &s.Channel, &s.ReplyCount, &s.Descendants, &s.LastReplyAt, &s.Participants); err != nil {
			return nil, errorf("thread summaries: %w", err)
		}
		if s.Participants == nil {
			s.Participants = []string{}
		}
		out[s.Root] = s
	}
	if err := res.Err(); err != nil {
		return nil, errorf("thread summaries: %w", err)
	}
	return out, nil
}

// Summaries returns the summary of each of roots that has replies. It does
// no access check: the roots are rows the reader was given.
func (s *Snapshot) Summaries(ctx context.Context, roots []string) (map[string]*records.Summary, error) {
	if len(roots) == 0 {
		return map[string]*records.Summary{}, nil
	}
	res, err := s.query(ctx, summarySQL, s.community, roots)
	if err != nil {
		return nil, errorf("thread summaries: %w", err)
	}
	return scanSummaries(res)
}

// ThreadMetadataGetSummary returns root's summary (reply_count 0 once its last reply
// is deleted), or nil when the root is unknown. It does no access check:
// live fan-out checks each subscriber.
func (s *Store) ThreadMetadataGetSummary(ctx context.Context, community, root string) (*records.Summary, error) {
	traced(ctx, threadSQL, []any{community, []string{root}})
	res, err := s.pool.Query(ctx, threadSQL, community, []string{root})
	if err != nil {
		return nil, errorf("thread summary: %w", err)
	}
	sums, err := scanSummaries(res)
	if err != nil {
		return nil, err
	}
	return sums[root], nil
}

package store

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// The sidebar's reads (Buzz's /buzz/v1/me/sidebar and read-state): a page
// of the reader's joined channels, their read marks, and per channel the
// unread window, each one statement of the snapshot. The window of a
// channel is an index range of events_channel_time from the channel's
// floor (the later of its whole-channel cut and the horizon) down, at most
// records.UnreadScan rows: never a scan of the channel.

// SidebarChannels lists a page of the reader's channels: joined (an active
// member), live, not a system channel; after the exclusive cursor, or
// exactly ids when ids is not nil; with uuidOnly, only ids in UUID form.
// Each carries its newest eligible message (any author, any depth),
// ordered by id, at most limit.
func (s *Snapshot) SidebarChannels(ctx context.Context, cursor string, ids []string, uuidOnly bool, eligible []int, limit int) ([]records.SidebarChannel, error) {
	rows, err := s.query(ctx, `
SELECT c.id, c.name, c.channel_type, c.archived_at IS NOT NULL, m.hidden_at IS NOT NULL,
       coalesce(l.id, ''), coalesce(l.created_at, 0)
FROM channel_members m
JOIN channels c ON c.community_id = m.community_id AND c.id = m.channel_id AND c.`+notDeleted+`
LEFT JOIN LATERAL (
  SELECT e.id, e.created_at FROM events e
  WHERE e.community_id = m.community_id AND e.channel_id = c.id AND e.kind = ANY($5) AND e.`+notDeleted+`
    AND `+unexpiredSQL+`
  ORDER BY e.created_at DESC, e.id LIMIT 1) l ON true
WHERE m.community_id = $1 AND m.pubkey = $2 AND m.`+activeMember+` AND c.channel_type <> 'system'
  AND ($4::text[] IS NULL AND m.channel_id > $3 OR m.channel_id = ANY($4))
  AND (NOT $6 OR m.channel_id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
ORDER BY m.channel_id
LIMIT $7`, s.community, s.reader, cursor, ids, eligible, uuidOnly, limit)
	if err != nil {
		return nil, errorf("sidebar channels: %w", err)
	}
	defer rows.Close()
	var out []records.SidebarChannel
	for rows.Next() {
		var c records.SidebarChannel
		if err := rows.Scan(&c.ID, &c.Name, &c.Type, &c.Archived, &c.Hidden, &c.LatestID, &c.LatestAt); err != nil {
			return nil, errorf("sidebar channels: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf("sidebar channels: %w", err)
	}
	return out, nil
}

// ReadMarks lists the reader's marks in channels.
func (s *Snapshot) ReadMarks(ctx context.Context, channels []string) ([]records.ReadMark, error) {
	rows, err := s.query(ctx, `SELECT channel_id, context, at, event_id FROM read_marks
WHERE community_id = $1 AND pubkey = $2 AND channel_id = ANY($3)`, s.community, s.reader, channels)
	if err != nil {
		return nil, errorf("read marks: %w", err)
	}
	defer rows.Close()
	var out []records.ReadMark
	for rows.Next() {
		var m records.ReadMark
		if err := rows.Scan(&m.Channel, &m.Context, &m.At.CreatedAt, &m.At.ID); err != nil {
			return nil, errorf("read marks: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// UnreadWindows reads, for each floor, the channel's eligible live events
// of other authors after the floor (in the window's order; a floor without
// an id, none) and at or
// after horizon, newest first, at most records.UnreadScan+1 per channel
// (one more than the scan says the window was cut), each with what the
// sidebar's reasons need: its thread, whether it names the reader in a p
// tag, whether it is a broadcast, and whether the reader is in its
// conversation (wrote its parent, or a live reply to the same parent). A
// top-level message's thread row is read only when it may be a broadcast
// reply (its raw JSON names "broadcast"): most rows need no second lookup,
// and the others one probe of thread_metadata's key each (a LATERAL with
// LIMIT 1: a plain join let the planner hash the whole table instead).
func (s *Snapshot) UnreadWindows(ctx context.Context, floors []records.ReadMark, eligible []int, horizon int64) ([]records.UnreadRow, error) {
	chs := make([]string, len(floors))
	ats := make([]int64, len(floors))
	fids := make([]string, len(floors))
	for i, f := range floors {
		chs[i], ats[i], fids[i] = f.Channel, f.At.CreatedAt, f.At.ID
	}
	rows, err := s.query(ctx, unreadWindowsSQL,
		s.community, s.reader, chs, ats, fids, eligible, horizon, records.UnreadScan+1)
	if err != nil {
		return nil, errorf("unread windows: %w", err)
	}
	defer rows.Close()
	var out []records.UnreadRow
	for rows.Next() {
		var r records.UnreadRow
		if err := rows.Scan(&r.Channel, &r.ID, &r.CreatedAt, &r.TopLevel, &r.Root, &r.Broadcast, &r.Mention, &r.Conversation); err != nil {
			return nil, errorf("unread windows: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// unreadWindowsSQL is UnreadWindows' statement: $1 community, $2 reader,
// $3-$5 the floors (channel, created_at, id), $6 the eligible kinds, $7
// the horizon, $8 the rows per channel.
var unreadWindowsSQL = `
SELECT w.ch, e.id, e.created_at, e.top_level, coalesce(tm.root_id, ''), coalesce(tm.broadcast, false),
` + reasonsSQL("$6") + `
FROM unnest($3::text[], $4::bigint[], $5::text[]) AS w(ch, at, id)
CROSS JOIN LATERAL (
  SELECT e.id, e.created_at, e.top_level, NOT e.top_level OR strpos(e.raw, '"broadcast"') > 0 AS threaded FROM events e
  WHERE e.community_id = $1 AND e.channel_id = w.ch AND e.created_at >= greatest(w.at, $7)
    AND (e.created_at > w.at OR e.created_at = w.at AND (e.id < w.id OR w.id = '')) AND e.kind = ANY($6) AND e.pubkey <> $2 AND e.` + notDeleted + `
    AND ` + unexpiredSQL + `
  ORDER BY e.created_at DESC, e.id
  LIMIT $8) e
LEFT JOIN LATERAL (
  SELECT tm.root_id, tm.parent_id, tm.broadcast FROM thread_metadata tm
  WHERE e.threaded AND tm.community_id = $1 AND tm.event_id = e.id LIMIT 1) tm ON true`

// reasonsSQL is the two reasons a row e (with its thread row tm) needs
// beyond its own columns, for $1 community and $2 reader, kinds the
// placeholder of the eligible kinds: whether it names the reader in a p
// tag (a mention), and whether the reader is in its conversation (wrote
// its parent, or a live reply to the same parent).
func reasonsSQL(kinds string) string {
	return `  EXISTS (SELECT 1 FROM event_tags t WHERE t.community_id = $1 AND t.event_id = e.id AND t.name = 'p' AND t.value = $2),
  tm.parent_id IS NOT NULL AND (
    EXISTS (SELECT 1 FROM events pe WHERE pe.community_id = $1 AND pe.id = tm.parent_id AND pe.pubkey = $2
              AND pe.kind = ANY(` + kinds + `) AND pe.` + notDeleted + `)
    OR EXISTS (SELECT 1 FROM thread_metadata sm JOIN events se ON se.community_id = sm.community_id AND se.id = sm.event_id
              WHERE sm.community_id = $1 AND sm.root_id = tm.root_id AND sm.parent_id = tm.parent_id
                AND se.pubkey = $2 AND se.kind = ANY(` + kinds + `) AND se.` + notDeleted + `))`
}

// ReadStateMessages reads the messages a read-state context names, in
// channel: each one's position, author, kind, thread and reasons, and
// whether it is live (not deleted, unexpired). A message of another
// channel, or none, is not listed.
func (s *Snapshot) ReadStateMessages(ctx context.Context, channel string, ids []string, eligible []int) ([]records.ContextMessage, error) {
	rows, err := s.query(ctx, `
SELECT e.id, e.pubkey, e.kind, e.created_at, e.top_level, e.`+notDeleted+` AND `+unexpiredSQL+`,
  coalesce(tm.root_id, ''), coalesce(tm.broadcast, false),
`+reasonsSQL("$5")+`
FROM events e
LEFT JOIN thread_metadata tm ON tm.community_id = e.community_id AND tm.event_id = e.id
WHERE e.community_id = $1 AND e.id = ANY($4) AND e.channel_id = $3`, s.community, s.reader, channel, ids, eligible)
	if err != nil {
		return nil, errorf("read-state messages: %w", err)
	}
	defer rows.Close()
	var out []records.ContextMessage
	for rows.Next() {
		var m records.ContextMessage
		if err := rows.Scan(&m.ID, &m.Pubkey, &m.Kind, &m.CreatedAt, &m.TopLevel, &m.Live, &m.Root, &m.Broadcast, &m.Mention, &m.Conversation); err != nil {
			return nil, errorf("read-state messages: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ReadMarksPut moves pubkey's mark of (channel, scope: records.Timeline,
// records.Cut or a thread root) forward to
// at: a mark never moves back (a later or equal one is kept), later in the
// window's order (created_at DESC, id ASC: the smaller id of one second is
// the later). The anchor
// must be a message of channel, of an eligible kind, in a channel the
// reader is an active member of (deleted or not: an old anchor may still
// advance a mark); ok is false when it is not (missing and not yours look
// alike).
func (t *Tx) ReadMarksPut(ctx context.Context, pubkey, channel, scope, anchor string, eligible []int, inThread string) (ok bool, err error) {
	tag, err := t.tx.Exec(ctx, `
INSERT INTO read_marks (community_id, pubkey, channel_id, context, at, event_id)
SELECT $1, $2, $3, $4, e.created_at, e.id
FROM events e
JOIN channels c ON c.community_id = e.community_id AND c.id = e.channel_id AND c.`+notDeleted+`
JOIN channel_members m ON m.community_id = c.community_id AND m.channel_id = c.id AND m.pubkey = $2 AND m.`+activeMember+`
LEFT JOIN thread_metadata tm ON tm.community_id = e.community_id AND tm.event_id = e.id
WHERE e.community_id = $1 AND e.id = $5 AND e.channel_id = $3 AND e.kind = ANY($6)
  AND ($7 = '' AND (e.top_level OR $4 = '*') OR $7 <> '' AND (e.id = $7 OR tm.root_id = $7))
ON CONFLICT (community_id, pubkey, channel_id, context) DO UPDATE SET at = excluded.at, event_id = excluded.event_id
  WHERE excluded.at > read_marks.at OR excluded.at = read_marks.at AND excluded.event_id < read_marks.event_id`,
		t.community, pubkey, channel, scope, anchor, eligible, inThread)
	if err != nil {
		return false, errorf("put read mark: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	// Not written: an anchor that is not one, or a mark already past it.
	var exists bool
	err = t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM read_marks WHERE community_id = $1 AND pubkey = $2 AND channel_id = $3 AND context = $4
  AND EXISTS (SELECT 1 FROM events e JOIN channel_members m ON m.community_id = e.community_id AND m.channel_id = e.channel_id
    AND m.pubkey = $2 AND m.`+activeMember+` WHERE e.community_id = $1 AND e.id = $5 AND e.channel_id = $3))`,
		t.community, pubkey, channel, scope, anchor).Scan(&exists)
	if err != nil {
		return false, errorf("read mark: %w", err)
	}
	return exists, nil
}

package query

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
)

type summary struct {
	root         string
	channel      string
	replyCount   int64
	descendants  int64
	lastReplyAt  *int64
	participants []string
}

type summaryJSON struct {
	ReplyCount      int64    `json:"reply_count"`
	DescendantCount int64    `json:"descendant_count"`
	LastReplyAt     *int64   `json:"last_reply_at"`
	Participants    []string `json:"participants"`
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

func scanSummaries(rows pgx.Rows) (map[string]*summary, error) {
	defer rows.Close()
	out := map[string]*summary{}
	for rows.Next() {
		s := &summary{}
		if err := rows.Scan(&s.root, &s.channel, &s.replyCount, &s.descendants, &s.lastReplyAt, &s.participants); err != nil {
			return nil, fmt.Errorf("query: thread summaries: %w", err)
		}
		if s.participants == nil {
			s.participants = []string{}
		}
		out[s.root] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query: thread summaries: %w", err)
	}
	return out, nil
}

// summaries returns the summary of each of roots that has replies.
func (r *reader) summaries(ctx context.Context, roots []string) (map[string]*summary, error) {
	if len(roots) == 0 {
		return map[string]*summary{}, nil
	}
	rows, err := r.query(ctx, summarySQL, r.community, roots)
	if err != nil {
		return nil, fmt.Errorf("query: thread summaries: %w", err)
	}
	return scanSummaries(rows)
}

// summaryEvent signs a 39005 for s.
func (e *Engine) summaryEvent(ctx context.Context, community, channel string, s *summary) (*nostr.Event, error) {
	content, err := json.Marshal(summaryJSON{
		ReplyCount:      s.replyCount,
		DescendantCount: s.descendants,
		LastReplyAt:     s.lastReplyAt,
		Participants:    s.participants,
	})
	if err != nil {
		return nil, fmt.Errorf("query: encode thread summary: %w", err)
	}
	ev := &nostr.Event{
		Kind:      KindThreadSummary,
		CreatedAt: nostr.Timestamp(e.now().Unix()),
		Tags:      nostr.Tags{{"e", s.root}, {"d", s.root}, {"h", channel}},
		Content:   string(content),
	}
	if err := e.sign(ctx, community, ev); err != nil {
		return nil, fmt.Errorf("query: sign thread summary: %w", err)
	}
	return ev, nil
}

// ThreadSummary returns a fresh relay-signed 39005 for rootID (reply_count
// 0 once its last reply is deleted), or nil when the root is unknown. Live
// fan-out calls it after a reply or a reply's deletion; it does no access
// check (fan-out checks each subscriber).
func (e *Engine) ThreadSummary(ctx context.Context, community, rootID string) (*nostr.Event, error) {
	rows, err := e.st.Pool.Query(ctx, threadSQL, community, []string{rootID})
	if err != nil {
		return nil, fmt.Errorf("query: thread summary: %w", err)
	}
	sums, err := scanSummaries(rows)
	if err != nil {
		return nil, err
	}
	s, ok := sums[rootID]
	if !ok {
		return nil, nil
	}
	return e.summaryEvent(ctx, community, s.channel, s)
}

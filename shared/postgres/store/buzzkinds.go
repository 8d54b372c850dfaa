package store

import (
	"context"
	"strconv"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
)

// EventsCountVotes counts the forum votes (45002) pubkey keeps on target.
func (t *Tx) EventsCountVotes(ctx context.Context, target, pubkey string) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `
SELECT count(*)
FROM event_tags g JOIN events e ON e.community_id = g.community_id AND e.id = g.event_id
WHERE g.community_id = $1 AND g.name = 'e' AND g.value = $2 AND g.kind = `+strconv.Itoa(kinds.ForumVote)+`
  AND e.pubkey = $3 AND e.`+notDeleted, t.community, target, pubkey).Scan(&n)
	if err != nil {
		return 0, errorf("votes on %s: %w", target, err)
	}
	return n, nil
}

// OwnState reads the snapshot reader's own stored, not deleted, not
// expired (unexpiredSQL) events of kind, newest first, all of them or none: when there are more than
// maxEvents or their stored bytes pass maxBytes, over is true and no row is
// read (NIP-RS read_state_snapshot is never partial). Both statements run
// in the snapshot, so the count is the rows'.
func (s *Snapshot) OwnState(ctx context.Context, kind, maxEvents int, maxBytes int64) (rows []records.Row, over bool, err error) {
	var n, size int64
	err = s.queryRow(ctx, `
SELECT count(*), coalesce(sum(octet_length(raw)), 0) FROM events e
WHERE community_id = $1 AND pubkey = $2 AND kind = $3 AND `+notDeleted+` AND `+addressKinds+` AND `+unexpiredSQL,
		s.community, s.reader, kind).Scan(&n, &size)
	if err != nil {
		return nil, false, errorf("own kind %d state: %w", kind, err)
	}
	if n > int64(maxEvents) || size > maxBytes {
		return nil, true, nil
	}
	rows, err = s.rows(ctx, "own state", `
SELECT id, raw, created_at FROM events e
WHERE community_id = $1 AND pubkey = $2 AND kind = $3 AND `+notDeleted+` AND `+addressKinds+` AND `+unexpiredSQL+`
ORDER BY created_at DESC, id ASC`, []any{s.community, s.reader, kind})
	return rows, false, err
}

// setThreadReplies sets community $1's NIP-CW row mode to $2.
const setThreadReplies = `UPDATE communities SET thread_replies_in_channel = $2 WHERE id = $1`

// CommunitiesSetThreadRepliesInChannel sets community id's NIP-CW row mode.
func (s *Store) CommunitiesSetThreadRepliesInChannel(ctx context.Context, id string, on bool) error {
	return s.updateCommunity(ctx, id, "set thread_replies_in_channel", setThreadReplies, on)
}

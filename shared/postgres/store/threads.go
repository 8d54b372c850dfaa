package store

import (
	"context"
	"strconv"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
)

// ThreadMetadataDeleteReply undoes a reply's contribution to its ancestors' counters,
// root row first like an insert.
func (t *Tx) ThreadMetadataDeleteReply(ctx context.Context, rootID, parentID string) error {
	if _, err := t.tx.Exec(ctx, `
UPDATE thread_metadata SET
  reply_count = reply_count - CASE WHEN event_id = $3 THEN 1 ELSE 0 END,
  descendant_count = descendant_count - 1
WHERE community_id = $1 AND event_id = $2`, t.community, rootID, parentID); err != nil {
		return errorf("update thread root: %w", err)
	}
	if parentID == rootID {
		return nil
	}
	return t.adjustChain(ctx, rootID, parentID, -1, 0)
}

// MaxThreadDepth caps thread depth (deeper replies are stored at this
// depth) and the ancestor walk of one reply: a reply updates at most this
// many ancestors besides the root, however long the chain above it is.
const MaxThreadDepth = relayinfo.MaxThreadDepth

// adjustChain updates the ancestors between parent and root (root excluded,
// its row is updated first by the caller), at most MaxThreadDepth of them.
func (t *Tx) adjustChain(ctx context.Context, rootID, parentID string, delta int, at int64) error {
	if _, err := t.tx.Exec(ctx, `
WITH RECURSIVE anc(event_id, parent_id, n) AS (
  SELECT event_id, parent_id, 1 FROM thread_metadata WHERE community_id = $1 AND event_id = $3
  UNION ALL
  SELECT m.event_id, m.parent_id, anc.n + 1 FROM thread_metadata m
  JOIN anc ON m.community_id = $1 AND m.event_id = anc.parent_id
  WHERE anc.n < `+strconv.Itoa(MaxThreadDepth)+`
)
UPDATE thread_metadata m SET
  reply_count = reply_count + CASE WHEN m.event_id = $3 THEN $4 ELSE 0 END,
  descendant_count = descendant_count + $4,
  last_reply_at = CASE WHEN $4 > 0 THEN GREATEST(COALESCE(last_reply_at, 0), $5) ELSE last_reply_at END
FROM anc WHERE m.community_id = $1 AND m.event_id = anc.event_id AND m.event_id <> $2`,
		t.community, rootID, parentID, delta, at); err != nil {
		return errorf("update thread ancestors: %w", err)
	}
	return nil
}

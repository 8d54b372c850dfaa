package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// Votes counts the forum votes (45002) pubkey keeps on target.
func (t *Tx) Votes(ctx context.Context, target, pubkey string) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `
SELECT count(*)
FROM event_tags g JOIN events e ON e.community_id = g.community_id AND e.id = g.event_id
WHERE g.community_id = $1 AND g.name = 'e' AND g.value = $2 AND g.kind = `+strconv.Itoa(kinds.ForumVote)+`
  AND e.pubkey = $3 AND e.deleted_at IS NULL`, t.community, target, pubkey).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: votes on %s: %w", target, err)
	}
	return n, nil
}

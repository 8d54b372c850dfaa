package query

import (
	"context"
	"fmt"
)

// auxClosure appends the two-hop closure of targets: hop 1 the reactions,
// deletions and edits (5, 7, 9005, 40003) that reference a target by e tag;
// hop 2 the deletions (5, 9005) that reference a hop-1 event, including
// hop-1 events that are themselves deleted (those are not sent, but their
// deletions are). Each hop is drained page by page past the DB clamp; every
// event goes out once and only when the reader may read it. named are the
// channels the request names (a window's or thread's own channel).
func (r *reader) auxClosure(ctx context.Context, targets, named []string, out *output) error {
	if len(targets) == 0 {
		return nil
	}
	hop1, err := r.drainAux(ctx, targets, auxKinds, named, true)
	if err != nil {
		return err
	}
	next := make([]string, 0, len(hop1))
	for _, ev := range hop1 {
		next = append(next, ev.id)
		if !ev.deleted {
			out.add(ev.id, ev.raw)
		}
	}
	if len(next) == 0 {
		return nil
	}
	hop2, err := r.drainAux(ctx, next, auxDeleteKinds, named, false)
	if err != nil {
		return err
	}
	for _, ev := range hop2 {
		out.add(ev.id, ev.raw)
	}
	return nil
}

type auxEvent struct {
	id, raw   string
	createdAt int64
	deleted   bool
}

// drainAux reads every readable event of kinds that has an e tag naming one
// of targets, newest first, a page of e.auxPage at a time.
func (r *reader) drainAux(ctx context.Context, targets []string, kinds []int, named []string, withDeleted bool) ([]auxEvent, error) {
	var all []auxEvent
	var until int64
	var beforeID string
	for page := 0; ; page++ {
		b := newSQL(r.community, r.pubkey)
		k := b.arg(kinds)
		conds := []string{
			"e.community_id = " + pCommunity,
			"e.id IN (SELECT t.event_id FROM event_tags t WHERE t.community_id = " + pCommunity +
				" AND t.name = 'e' AND t.value = ANY(" + b.arg(targets) + "::text[]) AND t.kind = ANY(" + k + "::integer[]))",
			"e.kind = ANY(" + k + "::integer[])",
		}
		if !withDeleted {
			conds = append(conds, "e.deleted_at IS NULL")
		}
		if page > 0 {
			conds = append(conds, keyset(b, until, beforeID))
		}
		conds = append(conds, accessClause(b, named))
		q := "SELECT e.id, e.raw, e.created_at, e.deleted_at IS NOT NULL FROM events e\nWHERE " + and(conds) +
			"\nORDER BY e.created_at DESC, e.id ASC LIMIT " + b.arg(r.e.auxPage)
		rows, err := r.query(ctx, q, b.args...)
		if err != nil {
			return nil, fmt.Errorf("query: aux closure: %w", err)
		}
		n := 0
		for rows.Next() {
			var ev auxEvent
			if err := rows.Scan(&ev.id, &ev.raw, &ev.createdAt, &ev.deleted); err != nil {
				rows.Close()
				return nil, fmt.Errorf("query: aux closure: %w", err)
			}
			all = append(all, ev)
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("query: aux closure: %w", err)
		}
		if n < r.e.auxPage {
			return all, nil
		}
		last := all[len(all)-1]
		until, beforeID = last.createdAt, last.id
	}
}

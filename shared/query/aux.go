package query

import (
	"context"
	"encoding/json"
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
	kind      int
	createdAt int64
	deleted   bool
}

// aimsAt reports whether an aux event's target is one of targets: a
// reaction's last e tag, an edit's first, any e tag of a deletion (5, 9005).
// An e tag that is not the target (a quoted private message, say) does not
// pull the event into another channel's closure.
func aimsAt(kind int, raw string, targets map[string]bool) bool {
	var ev struct {
		Tags [][]string `json:"tags"`
	}
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		return false
	}
	var es []string
	for _, t := range ev.Tags {
		if len(t) >= 2 && t[0] == "e" {
			es = append(es, t[1])
		}
	}
	if len(es) == 0 {
		return false
	}
	switch kind {
	case 7:
		return targets[es[len(es)-1]]
	case 40003:
		return targets[es[0]]
	}
	for _, id := range es {
		if targets[id] {
			return true
		}
	}
	return false
}

// drainAux reads every readable event of kinds in the named channels whose
// target is one of targets, newest first, a page of e.auxPage at a time.
func (r *reader) drainAux(ctx context.Context, targets []string, kinds []int, named []string, withDeleted bool) ([]auxEvent, error) {
	set := make(map[string]bool, len(targets))
	for _, id := range targets {
		set[id] = true
	}
	var all []auxEvent
	var until int64
	var beforeID string
	for page := 0; ; page++ {
		b := newSQL(r.community, r.pubkey)
		k := b.arg(kinds)
		// The tag lookup is materialized first: the targets are few and
		// event_tags finds them by value, while a plan led by the channel's
		// time index (tempting on an unanalyzed table) would walk the whole
		// channel to fill the page.
		tagged := "WITH tagged AS MATERIALIZED (SELECT DISTINCT t.event_id FROM event_tags t WHERE t.community_id = " + pCommunity +
			" AND t.name = 'e' AND t.value = ANY(" + b.arg(targets) + "::text[]) AND t.kind = ANY(" + k + "::integer[]))\n"
		conds := []string{
			"e.community_id = " + pCommunity,
			"e.kind = ANY(" + k + "::integer[])",
			"e.channel_id = ANY(" + b.arg(named) + "::text[])",
		}
		if !withDeleted {
			conds = append(conds, "e.deleted_at IS NULL")
		}
		if page > 0 {
			conds = append(conds, keyset(b, until, beforeID))
		}
		conds = append(conds, accessClause(b, named))
		q := tagged + "SELECT e.id, e.raw, e.kind, e.created_at, e.deleted_at IS NOT NULL FROM tagged JOIN events e ON e.id = tagged.event_id\nWHERE " + and(conds) +
			"\nORDER BY e.created_at DESC, e.id ASC LIMIT " + b.arg(r.e.auxPage)
		rows, err := r.query(ctx, q, b.args...)
		if err != nil {
			return nil, fmt.Errorf("query: aux closure: %w", err)
		}
		n := 0
		var last auxEvent
		for rows.Next() {
			var ev auxEvent
			if err := rows.Scan(&ev.id, &ev.raw, &ev.kind, &ev.createdAt, &ev.deleted); err != nil {
				rows.Close()
				return nil, fmt.Errorf("query: aux closure: %w", err)
			}
			last = ev
			n++
			if aimsAt(ev.kind, ev.raw, set) {
				all = append(all, ev)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("query: aux closure: %w", err)
		}
		if n < r.e.auxPage {
			return all, nil
		}
		until, beforeID = last.createdAt, last.id
	}
}

package store

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// AuxRead is one page of an aux closure hop: the events of Kinds in
// Channels that carry an e tag naming one of Targets, newest first,
// strictly after After when set.
type AuxRead struct {
	Targets  []string
	Kinds    []int
	Channels []string // the channels the request names (its window's or thread's)
	// WithDeleted keeps deleted events (hop 1: their deletions still go out).
	WithDeleted bool
	After       *records.Cursor
	Limit       int
}

// Aux returns one page of a, each event only when the reader may see it.
// Which e tag of an event is its target is the caller's to decide.
func (s *Snapshot) Aux(ctx context.Context, a *AuxRead) ([]records.AuxRow, error) {
	b := s.sql()
	k := b.arg(a.Kinds)
	// The tag lookup is materialized first: the targets are few and
	// event_tags finds them by value, while a plan led by the channel's
	// time index (tempting on an unanalyzed table) would walk the whole
	// channel to fill the page.
	tagged := "WITH tagged AS MATERIALIZED (SELECT DISTINCT t.event_id FROM event_tags t WHERE t.community_id = " + pCommunity +
		" AND t.name = 'e' AND t.value = ANY(" + b.arg(a.Targets) + "::text[]) AND t.kind = ANY(" + k + "::integer[]))\n"
	conds := []string{
		"e.community_id = " + pCommunity,
		"e.kind = ANY(" + k + "::integer[])",
		"e.channel_id = ANY(" + b.arg(a.Channels) + "::text[])",
	}
	if !a.WithDeleted {
		conds = append(conds, "e."+notDeleted)
	}
	if a.After != nil {
		conds = append(conds, keyset(b, *a.After))
	}
	conds = append(conds, maySeeSQL(b, a.Channels, a.Kinds, a.Channels))
	q := tagged + "SELECT e.id, e.raw, e.kind, e.created_at, e.deleted_at IS NOT NULL FROM tagged JOIN events e ON e.id = tagged.event_id\nWHERE " + and(conds) +
		"\nORDER BY " + keysetOrder + " LIMIT " + b.arg(a.Limit)
	res, err := s.query(ctx, q, b.args...)
	if err != nil {
		return nil, errorf("aux closure: %w", err)
	}
	defer res.Close()
	var out []records.AuxRow
	for res.Next() {
		var r records.AuxRow
		if err := res.Scan(&r.ID, &r.Raw, &r.Kind, &r.CreatedAt, &r.Deleted); err != nil {
			return nil, errorf("aux closure: %w", err)
		}
		out = append(out, r)
	}
	if err := res.Err(); err != nil {
		return nil, errorf("aux closure: %w", err)
	}
	return out, nil
}

package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Item is one event as NIP-77 reconciles it: its created_at and id.
type Item struct {
	CreatedAt int64
	ID        string
}

// EventsListItems returns the (created_at, id) of the distinct events of
// community that any of reads matches and reader may see (the access
// predicate of every read, limits and pages ignored as COUNT ignores
// them), in (created_at, id) order, at most max of them (0: none): a
// caller that asks for one more than it serves learns the set is larger.
func (s *Store) EventsListItems(ctx context.Context, community, reader string, reads []*PlainRead, max int) ([]Item, error) {
	if max <= 0 {
		return nil, nil
	}
	b := newSQL(community, reader)
	union, ok := unionOf(b, reads, (*PlainRead).itemSQL)
	if !ok {
		return []Item{}, nil
	}
	q := "SELECT created_at, id FROM (" + union + ") items\nORDER BY created_at, id LIMIT " + b.arg(max)
	traced(ctx, q, b.args)
	rows, err := s.pool.Query(ctx, q, b.args...)
	if err != nil {
		return nil, errorf("list items: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Item, error) {
		var it Item
		err := row.Scan(&it.CreatedAt, &it.ID)
		return it, err
	})
	if err != nil {
		return nil, errorf("list items: %w", err)
	}
	return items, nil
}

// itemSQL selects the (created_at, id) of every match of p, ignoring limit
// and page (EventsListItems).
func (p *PlainRead) itemSQL(b *sqlb) (string, bool) {
	w, ok := p.where(b)
	if !ok {
		return "", false
	}
	return "SELECT e.created_at, e.id FROM events e WHERE " + w, true
}

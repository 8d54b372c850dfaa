package store

import (
	"context"
	"strings"
)

// Countable is a read COUNT can count: *PlainRead, *WindowRead,
// *ThreadRead. Count ignores their limits, pages and probes.
type Countable interface {
	idSQL(b *sqlb) (string, bool) // SELECT of matching event ids; false = matches nothing
}

// EventsCount returns the number of distinct events of community that any of
// reads matches and reader may see, in one statement.
func (s *Store) EventsCount(ctx context.Context, community, reader string, reads []Countable) (int64, error) {
	b := newSQL(community, reader)
	union, ok := unionOf(b, reads, Countable.idSQL)
	if !ok {
		return 0, nil
	}
	q := "SELECT count(*) FROM (" + union + ") ids"
	traced(ctx, q, b.args)
	var n int64
	if err := s.pool.QueryRow(ctx, q, b.args...).Scan(&n); err != nil {
		return 0, errorf("count: %w", err)
	}
	return n, nil
}

// unionOf is the UNION of each read's SELECT (sel), parameters in b;
// false when no read can match anything.
func unionOf[R any](b *sqlb, reads []R, sel func(R, *sqlb) (string, bool)) (string, bool) {
	var parts []string
	for _, r := range reads {
		if q, ok := sel(r, b); ok {
			parts = append(parts, "("+q+")")
		}
	}
	return strings.Join(parts, "\nUNION\n"), len(parts) > 0
}

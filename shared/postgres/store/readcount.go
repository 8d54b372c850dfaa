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

// Count returns the number of distinct events of community that any of
// reads matches and reader may see, in one statement.
func (s *Store) Count(ctx context.Context, community, reader string, reads []Countable) (int64, error) {
	b := newSQL(community, reader)
	var parts []string
	for _, r := range reads {
		if q, ok := r.idSQL(b); ok {
			parts = append(parts, "("+q+")")
		}
	}
	if len(parts) == 0 {
		return 0, nil
	}
	q := "SELECT count(*) FROM (" + strings.Join(parts, "\nUNION\n") + ") ids"
	traced(ctx, q, b.args)
	var n int64
	if err := s.pool.QueryRow(ctx, q, b.args...).Scan(&n); err != nil {
		return 0, errorf("count: %w", err)
	}
	return n, nil
}

package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Seen is which transactions' writes a read saw: Postgres's
// pg_snapshot (xmin:xmax:xip_list), each transaction numbered as
// pg_current_xact_id() numbers it and as events.xact records it
// (migrations/022_events_xact.sql).
type Seen struct {
	Xmin, Xmax uint64
	InProgress []uint64
}

// snapshotSQL reads the snapshot of the statement, or of a REPEATABLE
// READ transaction when it is its first statement.
const snapshotSQL = `SELECT pg_current_snapshot()::text`

// ParseSeen reads pg_snapshot's text form.
func ParseSeen(text string) (Seen, error) {
	parts := strings.Split(text, ":")
	if len(parts) != 3 {
		return Seen{}, fmt.Errorf("store: snapshot %q: want xmin:xmax:xip_list", text)
	}
	var s Seen
	var err error
	if s.Xmin, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
		return Seen{}, fmt.Errorf("store: snapshot %q: %w", text, err)
	}
	if s.Xmax, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return Seen{}, fmt.Errorf("store: snapshot %q: %w", text, err)
	}
	if parts[2] != "" {
		for _, x := range strings.Split(parts[2], ",") {
			v, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return Seen{}, fmt.Errorf("store: snapshot %q: %w", text, err)
			}
			s.InProgress = append(s.InProgress, v)
		}
	}
	if s.Xmin > s.Xmax {
		return Seen{}, fmt.Errorf("store: snapshot %q: xmin above xmax", text)
	}
	return s, nil
}

// Sees reports whether a read under s saw the writes of transaction
// xact (committed before s was taken): below xmin, or below xmax and not
// in progress then. A transaction s did not see committed after it (or
// never did).
func (s Seen) Sees(xact uint64) bool {
	return xact < s.Xmin || (xact < s.Xmax && !slices.Contains(s.InProgress, xact))
}

// MaxCommittedAfter bounds EventsListCommittedAfter: a catch-up that would
// read more (a snapshot held back by a long transaction in a busy
// community) fails with ErrTooManyCommitted.
const MaxCommittedAfter = 1000

// ErrTooManyCommitted: more than MaxCommittedAfter events of the
// community may be beyond the snapshot.
var ErrTooManyCommitted = errors.New("store: too many events committed after the snapshot")

// eventsCommittedAfterSQL reads the events stored by transactions at or
// above a snapshot's xmin (events_xact), not deleted.
const eventsCommittedAfterSQL = `
SELECT e.raw, e.xact FROM events e
WHERE e.community_id = $1 AND e.xact >= $2 AND e.` + notDeleted + `
ORDER BY e.xact LIMIT $3`

// EventsListCommittedAfter returns the raw events of community, not
// deleted, stored by a transaction seen committed now and not by a read
// under seen: what committed after that read's snapshot.
func (s *Store) EventsListCommittedAfter(ctx context.Context, community string, seen Seen) ([]string, error) {
	rows, err := s.pool.Query(ctx, eventsCommittedAfterSQL, community, int64(seen.Xmin), MaxCommittedAfter+1)
	if err != nil {
		return nil, errorf("events committed after a snapshot: %w", err)
	}
	type row struct {
		raw  string
		xact int64
	}
	got, err := collect(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.raw, &x.xact)
		return x, err
	})
	if err != nil {
		return nil, errorf("events committed after a snapshot: %w", err)
	}
	if len(got) > MaxCommittedAfter {
		return nil, ErrTooManyCommitted
	}
	var out []string
	for _, r := range got {
		if !seen.Sees(uint64(r.xact)) {
			out = append(out, r.raw)
		}
	}
	return out, nil
}

package dbtest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/buzzrelay/relay/shared/postgres/store"
)

// DB is a second door on a test or benchmark database, beside the store:
// the pool itself, for the statements only tests run (a look at a table,
// EXPLAIN, a planner setting), and the bulk loads below.
type DB struct {
	*pgxpool.Pool
}

// Open builds a DB on the database at dsn (lazily connected); Close
// releases it.
func Open(ctx context.Context, dsn string) (*DB, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("dbtest: open %s: %w", redact(dsn), err)
	}
	return &DB{Pool: pool}, nil
}

// orNull is s, or SQL NULL when s is empty.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Bulk loading for benchmarks and test fixtures (the test kit's seeded
// channels): rows in exactly the shape the write path stores, written with
// COPY, without the write path's checks.

// BulkEvent is an events row with its single-letter tags.
type BulkEvent struct {
	ID, Pubkey string
	CreatedAt  int64
	Kind       int
	TopLevel   bool
	Raw        string
	// Search is the tsvector literal of the content; "" stores NULL (the
	// event is not searchable).
	Search string
	Tags   [][2]string
}

// BulkThread is a thread_metadata row.
type BulkThread struct {
	EventID             string
	CreatedAt           int64
	Parent, Root        string // "" stores NULL
	Depth               int
	Replies, Descendant int
	LastReplyAt         *int64
}

// BulkChannel creates channel id (open, a stream) owned by creator, unless
// it exists.
func (db *DB) BulkChannel(ctx context.Context, community, id, name, creator, createEvent string, at int64) error {
	return pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO channels (community_id, id, name, channel_type, visibility, creator, created_at, create_event)
VALUES ($1, $2, $3, 'stream', 'open', $4, $5, $6) ON CONFLICT DO NOTHING`, community, id, name, creator, at, createEvent); err != nil {
			return fmt.Errorf("dbtest: bulk channel %s: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO channel_members (community_id, channel_id, pubkey, role, added_at)
VALUES ($1, $2, $3, 'owner', $4) ON CONFLICT DO NOTHING`, community, id, creator, at); err != nil {
			return fmt.Errorf("dbtest: bulk channel %s owner: %w", id, err)
		}
		return nil
	})
}

// BulkEvents copies events of channel with their tags.
func (db *DB) BulkEvents(ctx context.Context, community, channel string, evs []BulkEvent) error {
	events := make([][]any, 0, len(evs))
	var tags [][]any
	for _, e := range evs {
		var search any
		if e.Search != "" {
			search = e.Search
		}
		events = append(events, []any{community, e.ID, e.Pubkey, e.CreatedAt, e.Kind, channel, e.TopLevel, nil, e.Raw, search})
		for _, t := range e.Tags {
			if store.IndexedTag(t[:]) {
				tags = append(tags, []any{community, e.ID, t[0], t[1], e.Kind, e.CreatedAt, channel})
			}
		}
	}
	if _, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"events"},
		[]string{"community_id", "id", "pubkey", "created_at", "kind", "channel_id", "top_level", "deleted_at", "raw", "search"},
		pgx.CopyFromRows(events)); err != nil {
		return fmt.Errorf("dbtest: copy events: %w", err)
	}
	if _, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"event_tags"},
		[]string{"community_id", "event_id", "name", "value", "kind", "created_at", "channel_id"},
		pgx.CopyFromRows(tags)); err != nil {
		return fmt.Errorf("dbtest: copy event_tags: %w", err)
	}
	return nil
}

// BulkThreads copies thread_metadata rows of channel.
func (db *DB) BulkThreads(ctx context.Context, community, channel string, ths []BulkThread) error {
	rows := make([][]any, 0, len(ths))
	for _, t := range ths {
		rows = append(rows, []any{community, t.EventID, channel, t.CreatedAt, orNull(t.Parent), orNull(t.Root), t.Depth, false,
			t.Replies, t.Descendant, t.LastReplyAt})
	}
	if _, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"thread_metadata"},
		[]string{"community_id", "event_id", "channel_id", "created_at", "parent_id", "root_id", "depth", "broadcast", "reply_count", "descendant_count", "last_reply_at"},
		pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("dbtest: copy thread_metadata: %w", err)
	}
	return nil
}

// BulkDeleted marks events deleted, each at its time.
func (db *DB) BulkDeleted(ctx context.Context, community string, at map[string]int64) error {
	ids := make([]string, 0, len(at))
	ats := make([]int64, 0, len(at))
	for id, t := range at {
		ids = append(ids, id)
		ats = append(ats, t)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE events e SET deleted_at = d.at FROM unnest($2::text[], $3::bigint[]) AS d(id, at)
WHERE e.community_id = $1 AND e.id = d.id`, community, ids, ats); err != nil {
		return fmt.Errorf("dbtest: mark deleted: %w", err)
	}
	return nil
}

// Analyze refreshes the planner statistics of the tables bulk loads write.
func (db *DB) Analyze(ctx context.Context) error {
	if _, err := db.Pool.Exec(ctx, `ANALYZE events, event_tags, thread_metadata, channels, channel_members`); err != nil {
		return fmt.Errorf("dbtest: analyze: %w", err)
	}
	return nil
}

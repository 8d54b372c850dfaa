package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// Snapshot is one read: a read-only REPEATABLE READ transaction of one
// community for one reader (the pubkey the access rule is decided for), so
// the rows, closure and summaries of a response all come from one snapshot.
type Snapshot struct {
	tx        pgx.Tx
	community string
	reader    string
}

// Read runs fn in one Snapshot of community for reader.
func (s *Store) Read(ctx context.Context, community, reader string, fn func(*Snapshot) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return errorf("begin read: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(&Snapshot{tx: tx, community: community, reader: reader}); err != nil {
		return interpret(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return errorf("commit read: %w", err)
	}
	return nil
}

// Community is the community the snapshot reads.
func (s *Snapshot) Community() string { return s.community }

// Reader is the key the snapshot's access rule is decided for.
func (s *Snapshot) Reader() string { return s.reader }

// Trace is a hook that sees every read statement and its arguments (tests
// that explain the plans).
type Trace func(sql string, args []any)

type traceKey struct{}

// WithTrace returns ctx whose reads report each statement to t.
func WithTrace(ctx context.Context, t Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

func traced(ctx context.Context, sql string, args []any) {
	if t, ok := ctx.Value(traceKey{}).(Trace); ok && t != nil {
		t(sql, args)
	}
}

func (s *Snapshot) query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	traced(ctx, sql, args)
	return s.tx.Query(ctx, sql, args...)
}

func (s *Snapshot) queryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	traced(ctx, sql, args)
	return s.tx.QueryRow(ctx, sql, args...)
}

// sql starts a statement of this snapshot's community and reader.
func (s *Snapshot) sql() *sqlb { return newSQL(s.community, s.reader) }

// CanRead reports whether the reader may read channel through a filter that
// names the channels named (access.MayRead).
func (s *Snapshot) CanRead(ctx context.Context, channel string, named []string) (bool, error) {
	b := s.sql()
	var ok bool
	if err := s.queryRow(ctx, "SELECT "+mayReadSQL(b, b.arg(channel), b.arg(nonNil(named))), b.args...).Scan(&ok); err != nil {
		return false, errorf("can read %s: %w", channel, err)
	}
	return ok, nil
}

// CanReadWindow is CanRead of a channel window together with the community's
// NIP-CW row mode (thread_replies_in_channel), both read in one statement of
// the snapshot the rows come from: a window costs no round trip for its mode.
func (s *Snapshot) CanReadWindow(ctx context.Context, channel string) (ok, replies bool, err error) {
	b := s.sql()
	q := "SELECT " + mayReadSQL(b, b.arg(channel), b.arg([]string{channel})) +
		", COALESCE((SELECT thread_replies_in_channel FROM communities WHERE id = " + pCommunity + "), false)"
	if err := s.queryRow(ctx, q, b.args...).Scan(&ok, &replies); err != nil {
		return false, false, errorf("can read window of %s: %w", channel, err)
	}
	return ok, replies, nil
}

// rows runs q and scans (id, raw, created_at) rows.
func (s *Snapshot) rows(ctx context.Context, what, q string, args []any) ([]records.Row, error) {
	res, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, errorf("%s: %w", what, err)
	}
	out, err := collect(res, scanRow)
	if err != nil {
		return nil, errorf("%s: %w", what, err)
	}
	return out, nil
}

// scanRow scans one (id, raw, created_at) row.
func scanRow(row pgx.CollectableRow) (records.Row, error) {
	var r records.Row
	err := row.Scan(&r.ID, &r.Raw, &r.CreatedAt)
	return r, err
}

package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lazyTx is a transaction whose BEGIN is sent in one batch with its first
// statement: on the write path every round trip costs CPU on both sides.
// A check (a one-row read whose verdict must come first, the ban check)
// waits in pending and travels in the same batch as the next statement.
type lazyTx struct {
	conn    *pgxpool.Conn
	begun   bool
	done    bool // committed together with the last statement
	pending *check
	// after, when set, rides the commit: its statements follow COMMIT in
	// the same batch.
	after *Delivery
	// lead are statements that ride the transaction's next batch: BEGIN's
	// (right behind it, before anything else of the transaction) when it
	// has not gone, else the next statement's or the commit's (before
	// COMMIT).
	lead []queued
}

// queued is one statement and its arguments.
type queued struct {
	sql  string
	args []any
}

// queueBegin adds BEGIN, unless it went, and the lead statements to b.
func (l *lazyTx) queueBegin(b *pgx.Batch) {
	if !l.begun {
		b.Queue("BEGIN")
	}
	for _, q := range l.lead {
		b.Queue(q.sql, q.args...)
	}
}

// readBegin consumes the results queueBegin queued and records that BEGIN
// and the lead statements went.
func (l *lazyTx) readBegin(br pgx.BatchResults) error {
	n := len(l.lead)
	if !l.begun {
		n++
	}
	l.begun, l.lead = true, nil
	for range n {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// queued reports whether a batch must go before the next statement:
// BEGIN, a lead statement or a check is waiting.
func (l *lazyTx) queued() bool { return !l.begun || len(l.lead) > 0 || l.pending != nil }

// check is a one-row read and the verdict on its row: an error from
// verdict refuses the transaction whatever the statements after it found.
type check struct {
	name    string // for errors
	sql     string
	args    []any
	dest    []any
	verdict func() error
}

// deferCheck queues c to be sent with the next statement.
func (l *lazyTx) deferCheck(c *check) { l.pending = c }

func (l *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if !l.queued() {
		return l.conn.Exec(ctx, sql, args...)
	}
	br, err := l.begin(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (l *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if !l.queued() {
		return l.conn.QueryRow(ctx, sql, args...)
	}
	br, err := l.begin(ctx, sql, args)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

func (l *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := l.settle(ctx); err != nil {
		return nil, err
	}
	if l.queued() {
		b := &pgx.Batch{}
		l.queueBegin(b)
		br := l.conn.SendBatch(ctx, b)
		err := l.readBegin(br)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return l.conn.Query(ctx, sql, args...)
}

// begin sends BEGIN (unless sent), the pending check and the statement
// together and consumes the results before the statement's: the caller
// reads the statement's and closes the batch. A check's refusal is
// returned instead of the statement's result.
func (l *lazyTx) begin(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	l.queueBegin(b)
	c := l.pending
	l.pending = nil
	if c != nil {
		b.Queue(c.sql, c.args...)
	}
	b.Queue(sql, args...)
	br := l.conn.SendBatch(ctx, b)
	if err := l.readBegin(br); err != nil {
		_ = br.Close()
		return nil, err
	}
	if c != nil {
		if err := c.decide(br.QueryRow()); err != nil {
			_ = br.Close()
			return nil, err
		}
	}
	return br, nil
}

// settle runs the pending check on its own, when no statement took it
// along: before a multi-row query or the commit, and when the transaction
// fails before its next statement (its refusal then comes first, as if it
// had run first).
func (l *lazyTx) settle(ctx context.Context) error {
	c := l.pending
	if c == nil {
		return nil
	}
	l.pending = nil
	return c.decide(l.conn.QueryRow(ctx, c.sql, c.args...))
}

// decide scans the check's row and returns its verdict.
func (c *check) decide(row pgx.Row) error {
	if err := row.Scan(c.dest...); err != nil {
		return errorf("%s: %w", c.name, err)
	}
	return c.verdict()
}

// queryRowAndCommit runs a one-row statement and COMMIT in one batch (with
// BEGIN in front when nothing was sent yet, and the statements of after
// behind) and scans the row into dest.
func (l *lazyTx) queryRowAndCommit(ctx context.Context, sql string, args []any, dest ...any) error {
	// A pending check must be decided before anything commits.
	if err := l.settle(ctx); err != nil {
		return err
	}
	b := &pgx.Batch{}
	l.queueBegin(b)
	b.Queue(sql, args...)
	b.Queue("COMMIT")
	l.queueAfter(b)
	br := l.conn.SendBatch(ctx, b)
	if err := l.readBegin(br); err != nil {
		_ = br.Close()
		return err
	}
	if err := br.QueryRow().Scan(dest...); err != nil {
		_ = br.Close()
		return err
	}
	return l.finish(br)
}

func (l *lazyTx) commit(ctx context.Context) error {
	if err := l.settle(ctx); err != nil {
		return err
	}
	if l.done && len(l.lead) > 0 {
		return errors.New("statements queued after the transaction committed")
	}
	if !l.begun || l.done {
		return nil
	}
	b := &pgx.Batch{}
	l.queueBegin(b) // statements queued since the last one
	b.Queue("COMMIT")
	l.queueAfter(b)
	br := l.conn.SendBatch(ctx, b)
	if err := l.readBegin(br); err != nil {
		_ = br.Close()
		return err
	}
	return l.finish(br)
}

// queueAfter adds the statements that ride the commit, if any, to b.
func (l *lazyTx) queueAfter(b *pgx.Batch) {
	if l.after != nil {
		l.after.queue(b)
	}
}

// finish reads COMMIT's result, the next in br, and then the statements
// behind it: once COMMIT succeeded the transaction is done, and a failure
// of those is theirs (after.failed), not the transaction's.
func (l *lazyTx) finish(br pgx.BatchResults) error {
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		if l.after != nil {
			l.after.failed(err)
		}
		return err
	}
	l.done = true
	if err := br.Close(); err != nil && l.after != nil {
		l.after.failed(err)
	}
	return nil
}

func (l *lazyTx) rollback(ctx context.Context) {
	if !l.begun || l.done {
		return
	}
	if _, err := l.conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		// The pool must not reuse a connection left inside a transaction.
		_ = l.conn.Conn().Close(context.WithoutCancel(ctx))
	}
}

type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lazyTx is a transaction whose BEGIN is sent in one batch with its first
// statement: on the write path every round trip costs CPU on both sides.
type lazyTx struct {
	conn  *pgxpool.Conn
	begun bool
	done  bool // committed together with the last statement
}

func (l *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if l.begun {
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
	if l.begun {
		return l.conn.QueryRow(ctx, sql, args...)
	}
	br, err := l.begin(ctx, sql, args)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

func (l *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if !l.begun {
		if _, err := l.conn.Exec(ctx, "BEGIN"); err != nil {
			return nil, err
		}
		l.begun = true
	}
	return l.conn.Query(ctx, sql, args...)
}

// begin sends BEGIN and the first statement together and consumes BEGIN's
// result; the caller reads the statement's and closes the batch.
func (l *lazyTx) begin(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sql, args...)
	br := l.conn.SendBatch(ctx, b)
	l.begun = true
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, err
	}
	return br, nil
}

// queryRowAndCommit runs a one-row statement and COMMIT in one batch (with
// BEGIN in front when nothing was sent yet) and scans the row into dest.
func (l *lazyTx) queryRowAndCommit(ctx context.Context, sql string, args []any, dest ...any) error {
	b := &pgx.Batch{}
	if !l.begun {
		b.Queue("BEGIN")
	}
	b.Queue(sql, args...)
	b.Queue("COMMIT")
	br := l.conn.SendBatch(ctx, b)
	if !l.begun {
		l.begun = true
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return err
		}
	}
	if err := br.QueryRow().Scan(dest...); err != nil {
		_ = br.Close()
		return err
	}
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	l.done = true
	return nil
}

func (l *lazyTx) commit(ctx context.Context) error {
	if !l.begun || l.done {
		return nil
	}
	_, err := l.conn.Exec(ctx, "COMMIT")
	return err
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

package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Statements the external tests inspect.
var DeliveryStatements = map[string]string{
	"events":                deliveryEventsSQL,
	"roots":                 deliveryRootsSQL,
	"system":                deliverySystemSQL,
	"system of one channel": deliverySystemOneSQL,
}

// UnreadWindowsSQL is the sidebar's unread-window statement.
var UnreadWindowsSQL = unreadWindowsSQL

// PlainSQL is the statement and arguments of a plain read.
func PlainSQL(community, reader string, p *PlainRead) (string, []any, bool) {
	b := newSQL(community, reader)
	q, ok := p.query(b)
	return q, b.args, ok
}

// LoadedByCommit reports whether the commit carried d's statements.
func LoadedByCommit(d *Delivery) bool { return d.out != nil && d.err == nil }

// InsertStatements are the SQL texts of every insert shape.
func InsertStatements() []string {
	var out []string
	for _, st := range insertStatements {
		out = append(out, st.sql)
	}
	return out
}

// Renumber is renumber.
var Renumber = renumber

// PoolOf is the store's own pool, for the tests that count its
// connections or hold one of them.
func PoolOf(s *Store) *pgxpool.Pool { return s.pool }

// PushRatesTake is takeRates in a transaction of its own (the claim's rule,
// exact under concurrency), for the tests that take rates alone.
func (s *Store) PushRatesTake(ctx context.Context, minute int64, rates []PushRate) (bool, error) {
	took := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) (err error) {
		took, err = takeRates(ctx, tx, minute, rates)
		return err
	})
	if err != nil {
		return false, errorf("take push rates: %w", err)
	}
	return took, nil
}

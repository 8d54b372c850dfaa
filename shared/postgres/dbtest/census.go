package dbtest

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Census is a database as a restore compares it: every public table's
// rows and each community's relay key (pubkey and ciphertext).
type Census struct {
	Rows map[string]int64
	Keys map[string]string
}

// CensusOf counts every public table's rows and reads each community's
// relay key of the database at dsn (localdev/restore's local check).
func CensusOf(ctx context.Context, dsn string) (Census, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return Census{}, fmt.Errorf("dbtest: census: connect: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	rows, err := c.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	if err != nil {
		return Census{}, fmt.Errorf("dbtest: census: tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return Census{}, fmt.Errorf("dbtest: census: tables: %w", err)
	}
	s := Census{Rows: map[string]int64{}, Keys: map[string]string{}}
	if !slices.Contains(tables, "communities") {
		return s, fmt.Errorf("dbtest: census: the database holds no relay (no communities table): run make dev once, or point DATABASE_URL at the relay's database")
	}
	for _, t := range tables {
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t}.Sanitize()).Scan(&n); err != nil {
			return s, fmt.Errorf("dbtest: census: count %s: %w", t, err)
		}
		s.Rows[t] = n
	}
	krows, err := c.Query(ctx, `SELECT id, coalesce(relay_pubkey, '') || ':' || coalesce(encode(relay_key_ciphertext, 'hex'), '') FROM communities`)
	if err != nil {
		return s, fmt.Errorf("dbtest: census: relay keys: %w", err)
	}
	for krows.Next() {
		var id, k string
		if err := krows.Scan(&id, &k); err != nil {
			return s, fmt.Errorf("dbtest: census: relay keys: %w", err)
		}
		s.Keys[id] = k
	}
	return s, krows.Err()
}

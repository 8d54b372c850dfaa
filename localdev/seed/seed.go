// Package seed is a bridge for callers written before the test kit had
// seeded channels: they now live in shared/testkit (testkit.Seed,
// testkit.SeedChannel). It goes once shared/query's tests call the kit.
package seed

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/buzzrelay/relay/shared/store"
	"github.com/buzzrelay/relay/shared/testkit"
)

// Options describe one channel to load.
type Options = testkit.SeedOptions

// Result says what was loaded.
type Result = testkit.SeedResult

// Load is testkit.Seed on the store of pool.
func Load(ctx context.Context, pool *pgxpool.Pool, o Options) (*Result, error) {
	return testkit.Seed(ctx, &store.Store{Pool: pool}, o)
}

// Analyze is store.Analyze on the store of pool.
func Analyze(ctx context.Context, pool *pgxpool.Pool) error {
	return (&store.Store{Pool: pool}).Analyze(ctx)
}

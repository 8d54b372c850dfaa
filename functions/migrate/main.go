// Command migrate is the deploy-time trigger: it applies pending migrations
// with the same migrator as localdev and the tests. Running it again is a
// no-op.
package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/app"
	"github.com/buzzrelay/relay/shared/config"
	"github.com/buzzrelay/relay/shared/migrate"
)

func main() {
	log := app.Logger()
	cfg, err := config.FromEnv()
	if err != nil {
		app.Fatal(log, "migrate: config", err)
	}
	lambda.Start(func(ctx context.Context) (map[string]int32, error) {
		dsn, err := cfg.DSN(ctx)
		if err != nil {
			return nil, fmt.Errorf("migrate: database: %w", err)
		}
		v, err := migrate.Up(ctx, dsn)
		if err != nil {
			return nil, err
		}
		if err := migrate.EnsureCommunity(ctx, dsn, cfg.DefaultCommunity, cfg.Getenv("BUZZ_COMMUNITY_HOST")); err != nil {
			return nil, err
		}
		log.InfoContext(ctx, "migrations applied", "version", v)
		return map[string]int32{"version": v}, nil
	})
}

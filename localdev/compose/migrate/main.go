// Command migrate is the one-shot migration step of localdev/compose.yaml:
// it applies pending migrations to the database of DATABASE_URL (or
// DB_SECRET_ARN) with the same migrator as make dev and the deploy-time
// trigger, registers the community (BUZZ_COMMUNITY), then exits. Running it
// again is a no-op.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/buzzrelay/relay/shared/postgres/migrate"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	v, err := run(ctx, os.Getenv)
	if err != nil {
		log.Error("migrate failed", "err", err)
		os.Exit(1)
	}
	log.Info("migrations applied", "version", v)
}

func run(ctx context.Context, getenv func(string) string) (int32, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return 0, fmt.Errorf("config: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	dsn, err := cfg.DSN(ctx)
	if err != nil {
		return 0, err
	}
	v, err := migrate.Up(ctx, dsn)
	if err != nil {
		return 0, err
	}
	// As the deploy-time trigger does: the configured community exists.
	if err := migrate.EnsureCommunity(ctx, dsn, cfg.DefaultCommunity, cfg.CommunityHost); err != nil {
		return 0, err
	}
	if err := cfg.RefreshDirectory(ctx, dsn); err != nil {
		return 0, err
	}
	return v, nil
}

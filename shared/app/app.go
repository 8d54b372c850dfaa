// Package app builds, once per cold start, what every entry point shares:
// logger, configuration, the pgx pool, the relay signer and the write path.
// Entry points (functions/*, localdev) add the parts they serve and start.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/buzzrelay/relay/shared/community"
	"github.com/buzzrelay/relay/shared/config"
	"github.com/buzzrelay/relay/shared/ingest"
	"github.com/buzzrelay/relay/shared/ratelimit"
	"github.com/buzzrelay/relay/shared/signer"
	"github.com/buzzrelay/relay/shared/store"
)

// App is the wired core. Signer and Ingest are nil in an App built by
// BuildWithoutKey.
type App struct {
	Config *config.Config
	Log    *slog.Logger
	Store  *store.Store
	// Communities resolves a request's Host to the community it serves.
	Communities *community.Registry
	// Keys is every community's relay key; Signer is Keys (nil without a key).
	Keys   *community.Keys
	Sealer community.Sealer // nil: communities can only use the configured key
	Signer signer.Signer
	Ingest *ingest.Service
	// Limiter is the per-key and per-connection rate limiter (RATE_*).
	Limiter *ratelimit.Limiter
}

// Logger returns the JSON logger every entry point uses (LOG_LEVEL: debug,
// info, warn, error; default info).
func Logger() *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToLower(os.Getenv("LOG_LEVEL")))); err != nil || os.Getenv("LOG_LEVEL") == "" {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// Build reads the environment and wires the core. It fails on any
// misconfiguration; the pool connects lazily.
func Build(ctx context.Context, log *slog.Logger) (*App, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return BuildWith(ctx, cfg, log)
}

// BuildWith wires the core from an already loaded configuration.
func BuildWith(ctx context.Context, cfg *config.Config, log *slog.Logger) (*App, error) {
	a, err := open(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	sg, err := cfg.Signer(ctx)
	if err != nil {
		a.Store.Close()
		return nil, fmt.Errorf("relay key: %w", err)
	}
	if a.Sealer, err = cfg.Sealer(ctx); err != nil {
		a.Store.Close()
		return nil, err
	}
	a.Keys = community.NewKeys(a.Communities, a.Sealer, sg)
	a.Signer = a.Keys
	a.Ingest = ingest.New(a.Store, a.Keys, log)
	return a, nil
}

// BuildWithoutKey wires only configuration and the pool, for functions that
// never sign (ws-connect, ws-disconnect): they get no relay key at all.
func BuildWithoutKey(ctx context.Context, log *slog.Logger) (*App, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return open(ctx, cfg, log)
}

func open(ctx context.Context, cfg *config.Config, log *slog.Logger) (*App, error) {
	st, err := cfg.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	limits, err := ratelimit.FromEnv(cfg.Getenv)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("rate limits: %w", err)
	}
	return &App{Config: cfg, Log: log, Store: st, Limiter: ratelimit.New(st, limits),
		Communities: community.NewRegistry(st, cfg.DefaultCommunity)}, nil
}

// Fatal logs err and exits; for main functions only.
func Fatal(log *slog.Logger, msg string, err error) {
	log.Error(msg, "err", err)
	os.Exit(1)
}

// Package migrate applies the SQL files of migrations/ in order. The same
// migrator runs from make dev, the tests and the deploy-time trigger; it is
// idempotent and serialized by tern's advisory lock. tern needs a pgx
// connection of its own, so this package imports pgx; every row it writes
// goes through shared/postgres/store.
package migrate

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"

	"github.com/buzzrelay/relay/migrations"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// VersionTable records the applied version.
const VersionTable = "schema_version"

// Up applies every pending migration on a dedicated connection to dsn and
// returns the version the database is at afterwards (Run, logging to the
// default logger).
func Up(ctx context.Context, dsn string) (int32, error) {
	r, err := Run(ctx, dsn, slog.Default())
	return r.Version, err
}

// Result is what Run found and did.
type Result struct {
	// Version is the database's version afterwards.
	Version int32
	// Known is the newest version this build carries.
	Known int32
	// Ahead is true when the database was already past Known: a newer
	// release migrated it and this (older) one is being rolled back to.
	// Migrations are additive and backward compatible for one release, so
	// the older code runs on the newer schema; nothing is applied.
	Ahead bool
}

// Run applies every pending migration on a dedicated connection to dsn. A
// database ahead of the known migrations is logged and left as it is, so a
// rollback to the previous release succeeds.
func Run(ctx context.Context, dsn string, log *slog.Logger) (Result, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return Result{}, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	m, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return Result{}, fmt.Errorf("migrate: new migrator: %w", err)
	}
	if err := m.LoadMigrations(migrations.FS); err != nil {
		return Result{}, fmt.Errorf("migrate: load migrations: %w", err)
	}
	r := Result{Known: int32(len(m.Migrations))}
	cur, err := m.GetCurrentVersion(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("migrate: read version: %w", err)
	}
	if cur > r.Known {
		log.WarnContext(ctx, "migrate: the database is ahead of this release's migrations; applying none (a rollback)",
			"database_version", cur, "known_version", r.Known)
		r.Version, r.Ahead = cur, true
		return r, nil
	}
	if err := m.Migrate(ctx); err != nil {
		return Result{}, fmt.Errorf("migrate: apply: %w", err)
	}
	if r.Version, err = m.GetCurrentVersion(ctx); err != nil {
		return Result{}, fmt.Errorf("migrate: read version: %w", err)
	}
	return r, nil
}

// EnsureCommunity registers community id (serving host, when not empty, as
// one of its hostnames) so events can reference it; running it again
// changes nothing. A host another community already serves is an error.
func EnsureCommunity(ctx context.Context, dsn, id, host string) error {
	st, err := store.Open(ctx, dsn, store.Options{MaxConns: 1})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer st.Close()
	h := relayurl.Hostname(host)
	owner, err := st.CommunitiesEnsure(ctx, id, h)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if h != "" && owner != id {
		return fmt.Errorf("migrate: host %s is served by community %q, not %q", h, owner, id)
	}
	return nil
}

// Package migrate applies the SQL files of migrations/ in order. The same
// migrator runs from make dev, the tests and the deploy-time trigger; it is
// idempotent and serialized by tern's advisory lock.
package migrate

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"

	"github.com/buzzrelay/relay/migrations"
)

// VersionTable records the applied version.
const VersionTable = "schema_version"

// Up applies every pending migration on a dedicated connection to dsn and
// returns the version the database is at afterwards.
func Up(ctx context.Context, dsn string) (int32, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	m, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return 0, fmt.Errorf("migrate: new migrator: %w", err)
	}
	if err := m.LoadMigrations(migrations.FS); err != nil {
		return 0, fmt.Errorf("migrate: load migrations: %w", err)
	}
	if err := m.Migrate(ctx); err != nil {
		return 0, fmt.Errorf("migrate: apply: %w", err)
	}
	v, err := m.GetCurrentVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: read version: %w", err)
	}
	return v, nil
}

// EnsureCommunity registers community id (serving host, when not empty) so
// events can reference it; running it again changes nothing.
func EnsureCommunity(ctx context.Context, dsn, id, host string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var h any
	if host != "" {
		h = host
	}
	if _, err := conn.Exec(ctx, `INSERT INTO communities (id, host) VALUES ($1, $2)
ON CONFLICT (id) DO UPDATE SET host = COALESCE(EXCLUDED.host, communities.host)`, id, h); err != nil {
		return fmt.Errorf("migrate: ensure community %s: %w", id, err)
	}
	return nil
}

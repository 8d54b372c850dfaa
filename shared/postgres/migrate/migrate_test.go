package migrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/postgres/migrate"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// A rollback runs the previous release's migrator against a database a newer
// release already migrated: it must log that and succeed, changing nothing.
func TestDatabaseAheadOfMigrationsSucceeds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn := testkit.NewDatabase(t)
	log := testkit.Quiet()
	r, err := migrate.Run(ctx, dsn, log)
	if err != nil || r.Ahead || r.Version != r.Known || r.Known < 5 {
		t.Fatalf("fresh database: %+v, %v", r, err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ahead := r.Known + 2
	if _, err := conn.Exec(ctx, "UPDATE "+migrate.VersionTable+" SET version = $1", ahead); err != nil {
		t.Fatal(err)
	}
	r, err = migrate.Run(ctx, dsn, log)
	if err != nil {
		t.Fatalf("ahead database: %v", err)
	}
	if !r.Ahead || r.Version != ahead {
		t.Fatalf("ahead database: %+v, want Ahead at version %d", r, ahead)
	}
	if v, err := migrate.Up(ctx, dsn); err != nil || v != ahead {
		t.Fatalf("Up on an ahead database: %d, %v", v, err)
	}
	var v int32
	if err := conn.QueryRow(ctx, "SELECT version FROM "+migrate.VersionTable).Scan(&v); err != nil || v != ahead {
		t.Fatalf("version changed to %d (%v)", v, err)
	}
}

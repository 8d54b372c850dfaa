package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/postgres/dbtest"
)

// Local runs the data steps of a restore on a local Postgres, the same
// sequence the AWS steps make: a snapshot of the database (pg_dump, as
// `make destroy`'s final snapshot or a point-in-time copy's snapshot), a
// new database restored from it (pg_restore into a fresh database, as
// CloudFormation's replacement cluster from SnapshotIdentifier), the
// migrate step on the copy (as the migrate resource runs again on the new
// endpoint), then a comparison of the copy with the original: every
// table's rows and each community's relay key.
type Local struct {
	// AdminDSN reaches the server (CREATE DATABASE); DSN is the database
	// restored.
	AdminDSN, DSN string
	// Name is the new database's; Dir holds the dump.
	Name, Dir string
	// Migrate is the migrate step (functions/migrate's work) on the copy.
	Migrate func(ctx context.Context, dsn string) error
}

// Report is what the copy holds against the original.
type Report struct {
	// CopyDSN is the restored database.
	CopyDSN string
	// Tables is every public table's rows in the original (and the copy:
	// Run fails on any difference).
	Tables map[string]int64
	// RelayKeys is each community's relay pubkey.
	RelayKeys map[string]string
}

// Run does the steps; the copy stays (CopyDSN), for a relay to serve it.
func (l Local) Run(ctx context.Context) (Report, error) {
	dump := filepath.Join(l.Dir, "relay.dump")
	before, err := snapshotOf(ctx, l.DSN)
	if err != nil {
		return Report{}, err
	}
	if err := pgTool(ctx, "pg_dump", "--format=custom", "--no-owner", "--file="+dump, "--dbname="+l.DSN); err != nil {
		return Report{}, err
	}
	copyDSN, err := dbtest.CreateDatabase(ctx, l.AdminDSN, l.Name, "template0")
	if err != nil {
		return Report{}, err
	}
	r := Report{CopyDSN: copyDSN, Tables: before.rows, RelayKeys: before.keys}
	if err := pgTool(ctx, "pg_restore", "--no-owner", "--exit-on-error", "--dbname="+copyDSN, dump); err != nil {
		return r, err
	}
	if l.Migrate != nil {
		if err := l.Migrate(ctx, copyDSN); err != nil {
			return r, fmt.Errorf("migrate on the restored database: %w", err)
		}
	}
	after, err := snapshotOf(ctx, copyDSN)
	if err != nil {
		return r, err
	}
	var diffs []string
	for t, n := range before.rows {
		if m, ok := after.rows[t]; !ok || m != n {
			diffs = append(diffs, fmt.Sprintf("table %s: %d rows, restored %d", t, n, m))
		}
	}
	for t := range after.rows {
		if _, ok := before.rows[t]; !ok {
			diffs = append(diffs, fmt.Sprintf("table %s only in the copy", t))
		}
	}
	for c, k := range before.keys {
		if after.keys[c] != k {
			diffs = append(diffs, fmt.Sprintf("community %s: relay key %s, restored %s", c, k, after.keys[c]))
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return r, fmt.Errorf("the restored database differs: %s", strings.Join(diffs, "; "))
	}
	return r, nil
}

type dbState struct {
	rows map[string]int64
	keys map[string]string
}

// snapshotOf counts every public table's rows and reads each community's
// relay key (pubkey and ciphertext).
func snapshotOf(ctx context.Context, dsn string) (dbState, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return dbState{}, fmt.Errorf("restore: connect: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	rows, err := c.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	if err != nil {
		return dbState{}, fmt.Errorf("restore: tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return dbState{}, fmt.Errorf("restore: tables: %w", err)
	}
	s := dbState{rows: map[string]int64{}, keys: map[string]string{}}
	if !slices.Contains(tables, "communities") {
		return s, fmt.Errorf("restore: the database holds no relay (no communities table): run make dev once, or point DATABASE_URL at the relay's database")
	}
	for _, t := range tables {
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t}.Sanitize()).Scan(&n); err != nil {
			return s, fmt.Errorf("restore: count %s: %w", t, err)
		}
		s.rows[t] = n
	}
	krows, err := c.Query(ctx, `SELECT id, coalesce(relay_pubkey, '') || ':' || coalesce(encode(relay_key_ciphertext, 'hex'), '') FROM communities`)
	if err != nil {
		return s, fmt.Errorf("restore: relay keys: %w", err)
	}
	for krows.Next() {
		var id, k string
		if err := krows.Scan(&id, &k); err != nil {
			return s, fmt.Errorf("restore: relay keys: %w", err)
		}
		s.keys[id] = k
	}
	return s, krows.Err()
}

// pgTool runs a PostgreSQL client program: on PATH, or in Debian's
// /usr/lib/postgresql/<version>/bin (newest first).
func pgTool(ctx context.Context, name string, args ...string) error {
	path, err := exec.LookPath(name)
	if err != nil {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
		sort.Sort(sort.Reverse(sort.StringSlice(found)))
		if len(found) == 0 {
			return fmt.Errorf("%s not found (Debian: postgresql-client)", name)
		}
		path = found[0]
	}
	if out, err := exec.CommandContext(ctx, path, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, out)
	}
	return nil
}

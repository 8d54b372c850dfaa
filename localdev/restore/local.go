package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

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
	before, err := dbtest.CensusOf(ctx, l.DSN)
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
	r := Report{CopyDSN: copyDSN, Tables: before.Rows, RelayKeys: before.Keys}
	if err := pgTool(ctx, "pg_restore", "--no-owner", "--exit-on-error", "--dbname="+copyDSN, dump); err != nil {
		return r, err
	}
	if l.Migrate != nil {
		if err := l.Migrate(ctx, copyDSN); err != nil {
			return r, fmt.Errorf("migrate on the restored database: %w", err)
		}
	}
	after, err := dbtest.CensusOf(ctx, copyDSN)
	if err != nil {
		return r, err
	}
	var diffs []string
	for t, n := range before.Rows {
		if m, ok := after.Rows[t]; !ok || m != n {
			diffs = append(diffs, fmt.Sprintf("table %s: %d rows, restored %d", t, n, m))
		}
	}
	for t := range after.Rows {
		if _, ok := before.Rows[t]; !ok {
			diffs = append(diffs, fmt.Sprintf("table %s only in the copy", t))
		}
	}
	for c, k := range before.Keys {
		if after.Keys[c] != k {
			diffs = append(diffs, fmt.Sprintf("community %s: relay key %s, restored %s", c, k, after.Keys[c]))
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return r, fmt.Errorf("the restored database differs: %s", strings.Join(diffs, "; "))
	}
	return r, nil
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

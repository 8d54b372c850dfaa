package dbtest

import (
	"context"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// Whole databases on one server, for the test kit and the benchmark
// commands: a scratch database per test, cloned from a migrated template.
// Each call opens its own connection to adminDSN (a maintenance database
// of the server) and closes it before returning.

// DatabaseDSN is adminDSN naming database name instead.
func DatabaseDSN(adminDSN, name string) (string, error) {
	u, err := url.Parse(adminDSN)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("dbtest: database url must be a postgres:// URL: %v", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

func onAdmin(ctx context.Context, adminDSN string, fn func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("dbtest: connect to %s: %w", redact(adminDSN), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return fn(conn)
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparseable database url)"
	}
	return u.Redacted()
}

// CreateDatabase creates database name, a copy of template when template
// is not empty (else of the server's default), and returns its DSN.
func CreateDatabase(ctx context.Context, adminDSN, name, template string) (string, error) {
	dsn, err := DatabaseDSN(adminDSN, name)
	if err != nil {
		return "", err
	}
	q := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		q += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	err = onAdmin(ctx, adminDSN, func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("dbtest: create database %s: %w", name, err)
		}
		return nil
	})
	return dsn, err
}

// DropDatabase drops database name, a template too, closing its
// connections.
func DropDatabase(ctx context.Context, adminDSN, name string) error {
	return onAdmin(ctx, adminDSN, func(c *pgx.Conn) error { return dropDatabase(ctx, c, name) })
}

func dropDatabase(ctx context.Context, c *pgx.Conn, name string) error {
	id := pgx.Identifier{name}.Sanitize()
	// A template cannot be dropped; unknown databases fail here, harmlessly.
	_, _ = c.Exec(ctx, "ALTER DATABASE "+id+" WITH IS_TEMPLATE false")
	if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dbtest: drop database %s: %w", name, err)
	}
	return nil
}

// AnalyzeDatabase refreshes the planner statistics of every table of the
// database at dsn, whoever created them (localdev/peerbench analyzes
// khatru's tables as well as the relay's).
func AnalyzeDatabase(ctx context.Context, dsn string) error {
	return onAdmin(ctx, dsn, func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, "ANALYZE"); err != nil {
			return fmt.Errorf("dbtest: analyze: %w", err)
		}
		return nil
	})
}

// EnsureTemplate makes template database name exist, built the first time
// by build on a scratch database that is then renamed into place, and
// drops the other templates whose name starts with prefix (older
// versions) when it can. Concurrent callers, in any process, wait on one advisory lock,
// so it is built once. The template accepts no connections: cloning it
// with CreateDatabase never finds it busy.
func EnsureTemplate(ctx context.Context, adminDSN, prefix, name string, build func(ctx context.Context, dsn string) error) error {
	return onAdmin(ctx, adminDSN, func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, prefix); err != nil {
			return fmt.Errorf("dbtest: lock templates: %w", err)
		}
		// Closing the connection releases the lock.
		var exists bool
		if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
			return fmt.Errorf("dbtest: look up template %s: %w", name, err)
		}
		if exists {
			return nil
		}
		rows, err := c.Query(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2`, prefix, name)
		if err != nil {
			return fmt.Errorf("dbtest: list templates: %w", err)
		}
		old, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("dbtest: list templates: %w", err)
		}
		// Best effort: an older template, or the scratch database of a
		// build that failed, goes; one busy right now stays for the next
		// run to drop.
		for _, o := range old {
			_ = dropDatabase(ctx, c, o)
		}
		scratch := name + "_build"
		sid := pgx.Identifier{scratch}.Sanitize()
		if _, err := c.Exec(ctx, "CREATE DATABASE "+sid); err != nil {
			return fmt.Errorf("dbtest: create %s: %w", scratch, err)
		}
		dsn, err := DatabaseDSN(adminDSN, scratch)
		if err != nil {
			return err
		}
		if err := build(ctx, dsn); err != nil {
			return fmt.Errorf("dbtest: build template %s: %w", name, err)
		}
		id := pgx.Identifier{name}.Sanitize()
		for _, q := range []string{
			"ALTER DATABASE " + sid + " RENAME TO " + id,
			"ALTER DATABASE " + id + " WITH IS_TEMPLATE true ALLOW_CONNECTIONS false",
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				return fmt.Errorf("dbtest: %s: %w", q, err)
			}
		}
		return nil
	})
}

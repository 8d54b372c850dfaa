package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// LoginRolesEnsure creates user (LOGIN) unless it exists, grants it iamRole
// when that role exists (Aurora's rds_iam), and DML on every table and
// sequence of schema public, now and for tables later migrations create.
// It never grants DDL. The caller checks user is a plain identifier; it is
// quoted here all the same.
func (s *Store) LoginRolesEnsure(ctx context.Context, user, iamRole string) error {
	u := pgx.Identifier{user}.Sanitize()
	var exists, hasIAM bool
	var db string
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1),
  EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $2), current_database()`, user, iamRole).Scan(&exists, &hasIAM, &db)
	if err != nil {
		return errorf("look up role %s: %w", user, err)
	}
	if !exists {
		// A concurrent run may create it first: that one stands.
		if _, err := s.pool.Exec(ctx, "CREATE ROLE "+u+" LOGIN"); err != nil && sqlState(err) != codeDuplicateObject {
			return errorf("create role %s: %w", user, err)
		}
	}
	stmts := []string{"ALTER ROLE " + u + " LOGIN"}
	if hasIAM {
		stmts = append(stmts, "GRANT "+pgx.Identifier{iamRole}.Sanitize()+" TO "+u)
	}
	stmts = append(stmts,
		"GRANT CONNECT ON DATABASE "+pgx.Identifier{db}.Sanitize()+" TO "+u,
		"GRANT USAGE ON SCHEMA public TO "+u,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+u,
		"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO "+u,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "+u,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO "+u,
	)
	for _, q := range stmts {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			return errorf("%s: %w", q, err)
		}
	}
	return nil
}

package config

import (
	"context"
	"errors"
	"fmt"

	"github.com/buzzrelay/relay/shared/dbsecret"
)

// DSN returns the pgx connection string: DATABASE_URL when set, else the one
// built from the Secrets Manager secret DB_SECRET_ARN (Aurora), with
// sslmode DB_SSLMODE (default require).
func (c *Config) DSN(ctx context.Context) (string, error) {
	if c.DatabaseURL != "" {
		return c.DatabaseURL, nil
	}
	arn := c.getenv("DB_SECRET_ARN")
	if arn == "" {
		return "", errors.New("no database configured: set DATABASE_URL or DB_SECRET_ARN")
	}
	sslmode := c.getenv("DB_SSLMODE")
	if sslmode == "" {
		sslmode = "require"
	}
	switch sslmode {
	case "disable", "allow", "prefer", "require", "verify-ca", "verify-full":
	default:
		return "", fmt.Errorf("DB_SSLMODE must be a libpq sslmode, got %q", sslmode)
	}
	ctx, cancel := context.WithTimeout(ctx, coldStartAWSTimeout)
	defer cancel()
	awsCfg, err := c.awsConfig(ctx)
	if err != nil {
		return "", err
	}
	dsn, err := dbsecret.Resolve(ctx, dbsecret.NewClient(awsCfg), arn, sslmode)
	if err != nil {
		return "", fmt.Errorf("DB_SECRET_ARN: %w", err)
	}
	return dsn, nil
}

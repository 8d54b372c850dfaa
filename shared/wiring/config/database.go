package config

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	rdsauth "github.com/aws/aws-sdk-go-v2/feature/rds/auth"
	"github.com/buzzrelay/relay/shared/aws/dbsecret"
	"github.com/buzzrelay/relay/shared/aws/secrets"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// DSN returns the pgx connection string: DATABASE_URL when set, else the one
// built from the Secrets Manager secret DB_SECRET_ARN (Aurora), with
// sslmode DB_SSLMODE (default require).
func (c *Config) DSN(ctx context.Context) (string, error) {
	if c.DatabaseURL != "" {
		return c.DatabaseURL, nil
	}
	arn := c.DBSecretARN
	if arn == "" {
		return "", errors.New("no database configured: set DATABASE_URL or DB_SECRET_ARN (or DB_AUTH=iam with DB_HOST, DB_NAME and DB_USER)")
	}
	sslmode, err := c.sslmode()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, coldStartAWSTimeout)
	defer cancel()
	awsCfg, err := c.awsConfig(ctx)
	if err != nil {
		return "", err
	}
	dsn, err := dbsecret.Resolve(ctx, secrets.NewClient(awsCfg), arn, sslmode)
	if err != nil {
		return "", fmt.Errorf("DB_SECRET_ARN: %w", err)
	}
	return withConnectTimeout(dsn, c.ConnectTimeout)
}

// withConnectTimeout puts d (whole seconds, at least 1) in a postgres:// URL
// as connect_timeout, so every connection made from it, the migrator's
// included, is bounded by DB_CONNECT_TIMEOUT.
func withConnectTimeout(dsn string, d time.Duration) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", errors.New("database URL does not parse")
	}
	q := u.Query()
	q.Set("connect_timeout", strconv.Itoa(max(1, int((d+time.Second-1)/time.Second))))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Store opens the pool the request path uses: DATABASE_URL when set, else
// by DB_AUTH (iam: an IAM auth token signed locally for every new
// connection, no network call; secret: DSN's Secrets Manager read), with
// the configured connect and idle timeouts. It connects lazily.
func (c *Config) Store(ctx context.Context) (*store.Store, error) {
	o := store.Options{
		MaxConns:       c.MaxConns,
		SimpleProtocol: c.SimpleProtocol,
		ConnectTimeout: c.ConnectTimeout,
		IdleTimeout:    c.IdleTimeout,
		RoundTrip:      c.Charges.AuroraRoundTrip,
	}
	var dsn string
	var err error
	if c.DatabaseURL == "" && c.DBAuth == "iam" {
		var password store.PasswordFunc
		dsn, password, err = c.iam(ctx)
		o.BeforeConnect = store.PasswordHook(password)
	} else {
		dsn, err = c.DSN(ctx)
	}
	if err != nil {
		return nil, err
	}
	return store.Open(ctx, dsn, o)
}

// iam builds the DSN of DB_HOST/DB_PORT/DB_NAME/DB_USER and the password of
// each new connection: a fresh RDS IAM auth token (valid 15 minutes).
func (c *Config) iam(ctx context.Context) (string, store.PasswordFunc, error) {
	host, port, name, user := c.IAM.Host, c.IAM.Port, c.IAM.Name, c.IAM.User
	if host == "" || name == "" || user == "" {
		return "", nil, errors.New("DB_AUTH=iam needs DB_HOST, DB_NAME and DB_USER")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", nil, fmt.Errorf("DB_PORT must be a TCP port, got %q", port)
	}
	sslmode, err := c.sslmode()
	if err != nil {
		return "", nil, err
	}
	awsCfg, err := c.awsConfig(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("DB_AUTH=iam: %w", err)
	}
	u := url.URL{Scheme: "postgres", User: url.User(user), Host: net.JoinHostPort(host, port), Path: "/" + name,
		RawQuery: url.Values{"sslmode": {sslmode}}.Encode()}
	region, creds := awsCfg.Region, awsCfg.Credentials
	token := func(ctx context.Context, endpoint, user string) (string, error) {
		return IAMToken(ctx, endpoint, region, user, creds)
	}
	return u.String(), token, nil
}

// IAMToken signs an RDS IAM auth token for user at endpoint (host:port)
// with creds; it makes no network call.
func IAMToken(ctx context.Context, endpoint, region, user string, creds aws.CredentialsProvider) (string, error) {
	token, err := rdsauth.BuildAuthToken(ctx, endpoint, region, user, creds)
	if err != nil {
		return "", fmt.Errorf("DB_AUTH=iam: build auth token for %s at %s: %w", user, endpoint, err)
	}
	return token, nil
}

// sslmode is DB_SSLMODE (default require), checked.
func (c *Config) sslmode() (string, error) {
	sslmode := c.DBSSLMode
	if sslmode == "" {
		sslmode = "require"
	}
	switch sslmode {
	case "disable", "allow", "prefer", "require", "verify-ca", "verify-full":
		return sslmode, nil
	}
	return "", fmt.Errorf("DB_SSLMODE must be a libpq sslmode, got %q", sslmode)
}

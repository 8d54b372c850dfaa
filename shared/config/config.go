// Package config reads the environment a function or the local server starts
// with. Everything is read once at cold start; a misconfiguration is an error
// returned before the first request, never a silent default.
package config

import (
	"fmt"
	"os"
	"strconv"
)

// Config is what every entry point needs.
type Config struct {
	// DatabaseURL is a pgx connection string (DATABASE_URL).
	DatabaseURL string
	// MaxConns bounds the pool (DB_MAX_CONNS, default 2: Lambda runs one
	// request per instance).
	MaxConns int32
	// SimpleProtocol selects QueryExecModeExec so the pool works behind
	// PgBouncer / RDS Proxy in transaction mode (DB_SIMPLE_PROTOCOL=1).
	SimpleProtocol bool
	// DefaultCommunity serves hosts that have no community of their own
	// (BUZZ_COMMUNITY, default "default").
	DefaultCommunity string
	// WSManagementEndpoint is the API Gateway @connections endpoint
	// (WS_MANAGEMENT_ENDPOINT), empty for functions that do not post to
	// connections.
	WSManagementEndpoint string
	// PublicScheme is the scheme clients use for HTTP (https behind API
	// Gateway, http in localdev). BUZZ_PUBLIC_SCHEME, default https.
	PublicScheme string

	getenv func(string) string
}

// Getenv returns the environment lookup this Config was loaded with.
func (c *Config) Getenv(key string) string { return c.getenv(key) }

// FromEnv loads the configuration from the process environment.
func FromEnv() (*Config, error) { return Load(os.Getenv) }

// Load reads the configuration through getenv (tests pass a map lookup).
func Load(getenv func(string) string) (*Config, error) {
	c := &Config{
		DatabaseURL:          getenv("DATABASE_URL"),
		DefaultCommunity:     getenv("BUZZ_COMMUNITY"),
		WSManagementEndpoint: getenv("WS_MANAGEMENT_ENDPOINT"),
		PublicScheme:         getenv("BUZZ_PUBLIC_SCHEME"),
		MaxConns:             2,
		getenv:               getenv,
	}
	if c.DefaultCommunity == "" {
		c.DefaultCommunity = "default"
	}
	if c.PublicScheme == "" {
		c.PublicScheme = "https"
	}
	if c.PublicScheme != "https" && c.PublicScheme != "http" {
		return nil, fmt.Errorf("BUZZ_PUBLIC_SCHEME must be http or https, got %q", c.PublicScheme)
	}
	if v := getenv("DB_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return nil, fmt.Errorf("DB_MAX_CONNS must be a whole number from 1 to 1000, got %q", v)
		}
		c.MaxConns = int32(n)
	}
	switch v := getenv("DB_SIMPLE_PROTOCOL"); v {
	case "", "0", "false":
	case "1", "true":
		c.SimpleProtocol = true
	default:
		return nil, fmt.Errorf("DB_SIMPLE_PROTOCOL must be 0 or 1, got %q", v)
	}
	return c, nil
}

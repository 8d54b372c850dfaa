// Package config reads the environment a function or the local server starts
// with. Everything is read once at cold start; a misconfiguration is an error
// returned before the first request, never a silent default.
package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
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
	// ConnectTimeout bounds each database connection attempt
	// (DB_CONNECT_TIMEOUT, Go duration, default 5s), so a paused Aurora
	// that takes longer to resume gets a "retry" answer, not a hung request.
	ConnectTimeout time.Duration
	// IdleTimeout is how long the pool keeps an unused connection
	// (DB_IDLE_TIMEOUT, default 30s); the pool keeps no minimum, so an idle
	// relay holds no connection and Aurora can pause.
	IdleTimeout time.Duration
	// DBAuth is how the pool authenticates when DATABASE_URL is not set:
	// "iam" (an RDS IAM auth token per connection) or "secret" (the Secrets
	// Manager secret DB_SECRET_ARN). DB_AUTH; default secret.
	DBAuth string
	// IAM is where DB_AUTH=iam connects (DB_HOST, DB_PORT default 5432,
	// DB_NAME, DB_USER).
	IAM IAMDatabase
	// DefaultCommunity serves hosts that have no community of their own
	// (BUZZ_COMMUNITY, default "default").
	DefaultCommunity string
	// WSManagementEndpoint is the API Gateway @connections endpoint
	// (WS_MANAGEMENT_ENDPOINT), empty for functions that do not post to
	// connections.
	WSManagementEndpoint string
	// PublicScheme is the scheme clients use for HTTP (https behind API
	// Gateway, http in localdev). BUZZ_PUBLIC_SCHEME, default https, or the
	// scheme of BUZZ_PUBLIC_URL.
	PublicScheme string
	// PublicHost is the host of BUZZ_PUBLIC_URL (empty when unset): clients
	// reach the relay there (e.g. through CloudFront), so NIP-98 `u`, the
	// NIP-42 `relay` tag and the community are matched against it instead
	// of the Host a request arrives with.
	PublicHost string
	// HostHeader (BUZZ_HOST_HEADER, lowercase) names the header CloudFront
	// copies the viewer's Host into when one deployment serves several
	// hostnames; empty: the Host header (or PublicHost) is used.
	HostHeader string

	getenv func(string) string
}

// IAMDatabase is the database an IAM-authenticated pool connects to.
type IAMDatabase struct {
	Host, Port, Name, User string
}

// Getenv returns the environment lookup this Config was loaded with.
func (c *Config) Getenv(key string) string { return c.getenv(key) }

// FromEnv loads the configuration from the process environment.
func FromEnv() (*Config, error) { return Load(os.Getenv) }

// Defaults of the pool timings.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultIdleTimeout    = 30 * time.Second
)

// Load reads the configuration through getenv (tests pass a map lookup).
func Load(getenv func(string) string) (*Config, error) {
	c := &Config{
		DatabaseURL:          getenv("DATABASE_URL"),
		DefaultCommunity:     getenv("BUZZ_COMMUNITY"),
		WSManagementEndpoint: getenv("WS_MANAGEMENT_ENDPOINT"),
		PublicScheme:         getenv("BUZZ_PUBLIC_SCHEME"),
		MaxConns:             2,
		ConnectTimeout:       DefaultConnectTimeout,
		IdleTimeout:          DefaultIdleTimeout,
		getenv:               getenv,
	}
	if c.DefaultCommunity == "" {
		c.DefaultCommunity = "default"
	}
	if err := c.loadPublicURL(getenv("BUZZ_PUBLIC_URL")); err != nil {
		return nil, err
	}
	if c.PublicScheme == "" {
		c.PublicScheme = "https"
	}
	c.HostHeader = strings.ToLower(getenv("BUZZ_HOST_HEADER"))
	if c.HostHeader != "" && (c.PublicHost != "" || !headerRE.MatchString(c.HostHeader)) {
		return nil, fmt.Errorf("BUZZ_HOST_HEADER must be a header name such as x-buzz-host, without BUZZ_PUBLIC_URL (which pins one host), got %q", c.HostHeader)
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
	var err error
	if c.ConnectTimeout, err = duration(getenv, "DB_CONNECT_TIMEOUT", DefaultConnectTimeout, 100*time.Millisecond, 2*time.Minute); err != nil {
		return nil, err
	}
	if c.IdleTimeout, err = duration(getenv, "DB_IDLE_TIMEOUT", DefaultIdleTimeout, 100*time.Millisecond, time.Hour); err != nil {
		return nil, err
	}
	c.IAM = IAMDatabase{Host: getenv("DB_HOST"), Port: getenv("DB_PORT"), Name: getenv("DB_NAME"), User: getenv("DB_USER")}
	if c.IAM.Port == "" {
		c.IAM.Port = "5432"
	}
	switch c.DBAuth = getenv("DB_AUTH"); c.DBAuth {
	case "":
		c.DBAuth = "secret"
	case "iam", "secret":
	default:
		return nil, fmt.Errorf("DB_AUTH must be iam or secret, got %q", c.DBAuth)
	}
	return c, nil
}

var headerRE = regexp.MustCompile(`^x-[a-z0-9-]{1,60}$`)

// loadPublicURL reads BUZZ_PUBLIC_URL: an http(s) base URL without a path.
func (c *Config) loadPublicURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("BUZZ_PUBLIC_URL must be an http(s) base URL such as https://relay.example.com, got %q", v)
	}
	if c.PublicScheme != "" && c.PublicScheme != u.Scheme {
		return fmt.Errorf("BUZZ_PUBLIC_SCHEME %q contradicts BUZZ_PUBLIC_URL %q: set only BUZZ_PUBLIC_URL", c.PublicScheme, v)
	}
	c.PublicScheme = u.Scheme
	c.PublicHost = strings.ToLower(u.Host)
	return nil
}

// duration reads a Go duration variable bounded by lo and hi.
func duration(getenv func(string) string, key string, def, lo, hi time.Duration) (time.Duration, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		return 0, fmt.Errorf("%s must be a Go duration from %s to %s (e.g. 5s), got %q", key, lo, hi, v)
	}
	return d, nil
}

package config

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

func TestPoolSettings(t *testing.T) {
	c := load(t, map[string]string{})
	if c.ConnectTimeout != 5*time.Second || c.IdleTimeout != 30*time.Second || c.DBAuth != "secret" {
		t.Fatalf("defaults: %v %v %q", c.ConnectTimeout, c.IdleTimeout, c.DBAuth)
	}
	c = load(t, map[string]string{"DB_CONNECT_TIMEOUT": "2s", "DB_IDLE_TIMEOUT": "45s", "DB_AUTH": "iam"})
	if c.ConnectTimeout != 2*time.Second || c.IdleTimeout != 45*time.Second || c.DBAuth != "iam" {
		t.Fatalf("set: %v %v %q", c.ConnectTimeout, c.IdleTimeout, c.DBAuth)
	}
	for env, msg := range map[string]string{
		"DB_CONNECT_TIMEOUT=5":                   "DB_CONNECT_TIMEOUT must be a Go duration",
		"DB_IDLE_TIMEOUT=-1s":                    "DB_IDLE_TIMEOUT must be a Go duration",
		"DB_AUTH=password":                       "DB_AUTH must be iam or secret",
		"BUZZ_PUBLIC_URL=ftp://x":                "BUZZ_PUBLIC_URL must be",
		"BUZZ_PUBLIC_URL=https://":               "BUZZ_PUBLIC_URL must be",
		"BUZZ_PUBLIC_URL=https://r.example/path": "BUZZ_PUBLIC_URL must be",
	} {
		k, v, _ := strings.Cut(env, "=")
		if _, err := Load(func(key string) string { return map[string]string{k: v}[key] }); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want %q", env, err, msg)
		}
	}
	if _, err := Load(func(k string) string {
		return map[string]string{"BUZZ_PUBLIC_URL": "https://r.example", "BUZZ_PUBLIC_SCHEME": "http"}[k]
	}); err == nil || !strings.Contains(err.Error(), "contradicts") {
		t.Errorf("contradicting scheme: %v", err)
	}
	c = load(t, map[string]string{"BUZZ_PUBLIC_URL": "https://Relay.Example.com/"})
	if c.PublicScheme != "https" || c.PublicHost != "relay.example.com" {
		t.Fatalf("public URL: %q %q", c.PublicScheme, c.PublicHost)
	}
}

// DB_AUTH=iam signs a fresh RDS auth token into every new connection's
// password, locally (static credentials, no endpoint reachable), and the
// pool it builds really connects (the local Postgres trusts loopback, so the
// token itself is not checked here: Aurora checks it).
func TestIAMAuth(t *testing.T) {
	testkit.IsolateKMS(t, "http://127.0.0.1:9") // nothing listens there: any AWS call would fail
	t.Setenv("AWS_REGION", "eu-west-2")
	u, err := url.Parse(os.Getenv("DATABASE_URL"))
	if err != nil || u.Host == "" {
		t.Fatalf("DATABASE_URL: %v", err)
	}
	env := map[string]string{"DB_AUTH": "iam", "DB_HOST": u.Hostname(), "DB_PORT": u.Port(), "DB_NAME": strings.TrimPrefix(u.Path, "/"),
		"DB_USER": u.User.Username(), "DB_SSLMODE": "disable", "AWS_REGION": "eu-west-2"}
	c := load(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dsn, password, err := c.iam(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PasswordHook(password)(ctx, cc); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{u.Hostname() + ":" + u.Port() + "?Action=connect", "Action=connect", "DBUser=" + u.User.Username(), "X-Amz-Signature=", "eu-west-2%2Frds-db%2Faws4_request"} {
		if !strings.Contains(cc.Password, want) {
			t.Fatalf("token %q lacks %q", cc.Password, want)
		}
	}
	st, err := c.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("IAM pool: %v", err)
	}
	if _, err := load(t, map[string]string{"DB_AUTH": "iam", "DB_HOST": "h"}).Store(ctx); err == nil || !strings.Contains(err.Error(), "DB_NAME and DB_USER") {
		t.Fatalf("incomplete IAM settings: %v", err)
	}
}

func TestSecretDSNCarriesTheConnectTimeout(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{5 * time.Second: 5 * time.Second, time.Minute: time.Minute,
		300 * time.Millisecond: time.Second, 1500 * time.Millisecond: 2 * time.Second} {
		got, err := withConnectTimeout("postgres://u:p@h:5432/buzz?sslmode=require", d)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := pgx.ParseConfig(got)
		if err != nil {
			t.Fatal(err)
		}
		if cc.ConnectTimeout != want || cc.TLSConfig == nil {
			t.Fatalf("%s: %s gives connect timeout %s", d, got, cc.ConnectTimeout)
		}
	}
}

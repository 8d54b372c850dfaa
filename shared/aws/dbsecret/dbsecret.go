// Package dbsecret builds a pgx connection string from the Secrets Manager
// secret that Aurora / RDS keeps for a cluster (JSON with host, port,
// username, password, dbname).
package dbsecret

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/buzzrelay/relay/shared/aws/secrets"
)

// Secret is the part of the RDS secret JSON that a connection needs.
type Secret struct {
	Host     string `json:"host"`
	Port     port   `json:"port"`
	Username string `json:"username"`
	Password string `json:"password"`
	DBName   string `json:"dbname"`
}

// port accepts 5432 and "5432" (RDS writes a number, hand-made secrets often
// a string).
type port int

func (p *port) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*p = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %s is not a TCP port", b)
	}
	*p = port(n)
	return nil
}

// DSN turns the secret JSON into a postgres:// URL. sslmode is appended as
// given ("require" for Aurora: traffic is encrypted; the RDS CA is not in
// the Lambda image's trust store, so verify-full needs a bundled CA).
func DSN(secretJSON, sslmode string) (string, error) {
	var s Secret
	if err := json.Unmarshal([]byte(secretJSON), &s); err != nil {
		return "", fmt.Errorf("database secret is not the RDS JSON form: %w", err)
	}
	var missing []string
	if s.Host == "" {
		missing = append(missing, "host")
	}
	if s.Username == "" {
		missing = append(missing, "username")
	}
	if s.Password == "" {
		missing = append(missing, "password")
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("database secret lacks %s", strings.Join(missing, ", "))
	}
	if s.Port == 0 {
		s.Port = 5432
	}
	if s.DBName == "" {
		s.DBName = "postgres"
	}
	u := url.URL{
		Scheme: "postgres",
		User:   url.UserPassword(s.Username, s.Password),
		Host:   net.JoinHostPort(s.Host, strconv.Itoa(int(s.Port))),
		Path:   "/" + s.DBName,
	}
	if sslmode != "" {
		u.RawQuery = url.Values{"sslmode": {sslmode}}.Encode()
	}
	return u.String(), nil
}

// Resolve fetches secret arn and returns its DSN.
func Resolve(ctx context.Context, client secrets.GetAPI, arn, sslmode string) (string, error) {
	return secrets.Fetch(ctx, client, "database secret", arn, func(v string) (string, error) { return DSN(v, sslmode) })
}

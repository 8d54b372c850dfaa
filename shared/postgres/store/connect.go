package store

import (
	"context"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// PasswordFunc answers the password of a new connection to endpoint
// (host:port) as user; an RDS IAM auth token, signed fresh per connection.
type PasswordFunc func(ctx context.Context, endpoint, user string) (string, error)

// PasswordHook is the Options.BeforeConnect that puts password's answer in
// each new connection's settings, so a pool logs in with short-lived
// credentials (IAM database auth) for as long as it lives.
func PasswordHook(password PasswordFunc) func(context.Context, *pgx.ConnConfig) error {
	return func(ctx context.Context, cc *pgx.ConnConfig) error {
		p, err := password(ctx, net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))), cc.User)
		if err != nil {
			return err
		}
		cc.Password = p
		return nil
	}
}

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/buzzrelay/relay/shared/postgres/dbtest"
)

// ScratchDatabase creates an empty database named prefix_{random} on the
// server of adminDSN for a benchmark command and returns its DSN and the
// function that drops it.
func ScratchDatabase(ctx context.Context, adminDSN, prefix string) (string, func(), error) {
	var rb [6]byte
	_, _ = rand.Read(rb[:])
	name := prefix + "_" + hex.EncodeToString(rb[:])
	dsn, err := dbtest.CreateDatabase(ctx, adminDSN, name, "")
	if err != nil {
		return "", nil, err
	}
	drop := func() { _ = dbtest.DropDatabase(context.Background(), adminDSN, name) }
	return dsn, drop, nil
}

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// ScratchDatabase creates an empty database named prefix_{random} on the
// server of adminDSN for a benchmark command and returns its DSN and the
// function that drops it.
func ScratchDatabase(ctx context.Context, adminDSN, prefix string) (string, func(), error) {
	var rb [6]byte
	_, _ = rand.Read(rb[:])
	name := prefix + "_" + hex.EncodeToString(rb[:])
	u, err := url.Parse(adminDSN)
	if err != nil {
		return "", nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return "", nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop := func() {
		c, err := pgx.Connect(context.Background(), adminDSN)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// freshStore opens a store on a fresh migrated database.
func freshStore(t *testing.T) *store.Store {
	t.Helper()
	return testkit.NewStore(t, store.Options{MaxConns: 2})
}

// freshConn is freshStore and one of its connections, released when the
// test ends.
func freshConn(t *testing.T) (*store.Store, *pgxpool.Conn) {
	t.Helper()
	st := freshStore(t)
	conn, err := store.PoolOf(st).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Release)
	return st, conn
}

// dbOf is the store's own pool as a dbtest.DB, for bulk seeding.
func dbOf(st *store.Store) *dbtest.DB { return &dbtest.DB{Pool: store.PoolOf(st)} }

// keypair returns a new secret key and its public key.
func keypair() (sk, pk string) {
	sk = nostr.GeneratePrivateKey()
	pk, _ = nostr.GetPublicKey(sk)
	return sk, pk
}

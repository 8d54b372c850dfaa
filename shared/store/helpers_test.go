package store_test

import (
	"context"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/store"
	"github.com/buzzrelay/relay/shared/testkit"
)

// freshStore opens a store on a fresh migrated database.
func freshStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), testkit.NewDatabase(t), store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// keypair returns a new secret key and its public key.
func keypair() (sk, pk string) {
	sk = nostr.GeneratePrivateKey()
	pk, _ = nostr.GetPublicKey(sk)
	return sk, pk
}

package store_test

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/store"
	"github.com/buzzrelay/relay/shared/testkit"
)

// freshStore opens a store on a fresh migrated database.
func freshStore(t *testing.T) *store.Store {
	t.Helper()
	return testkit.NewStore(t, store.Options{MaxConns: 2})
}

// keypair returns a new secret key and its public key.
func keypair() (sk, pk string) {
	sk = nostr.GeneratePrivateKey()
	pk, _ = nostr.GetPublicKey(sk)
	return sk, pk
}

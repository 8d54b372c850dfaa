// Package signer provides the relay key: the interface every relay-signed
// event goes through, and the local implementation used by make dev and tests.
package signer

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// Signer signs events with the relay's key. Implementations hold the secret in
// memory only; Sign sets PubKey, ID and Sig on the event.
type Signer interface {
	PublicKey() string
	Sign(ctx context.Context, ev *nostr.Event) error
}

// Key is a Signer over a 32-byte secp256k1 secret held in memory.
type Key struct {
	secret string
	public func() string
}

// FromHex builds a Key from a 64-character hex secret. Its public key is
// derived in the background: the first derivation loads the curve's
// precomputed tables (tens of ms), which then overlaps the rest of a cold
// start instead of adding to it; PublicKey waits for it.
func FromHex(secret string) (*Key, error) {
	secret = strings.TrimSpace(strings.ToLower(secret))
	if len(secret) != 64 {
		return nil, fmt.Errorf("relay secret key must be 64 hex characters, got %d", len(secret))
	}
	if _, err := hex.DecodeString(secret); err != nil {
		return nil, fmt.Errorf("relay secret key: %w", err)
	}
	k := &Key{secret: secret, public: sync.OnceValue(func() string {
		pub, _ := nostr.GetPublicKey(secret) // cannot fail: secret is 32 bytes of hex
		return pub
	})}
	go k.public()
	return k, nil
}

// PublicKey returns the hex x-only public key.
func (k *Key) PublicKey() string { return k.public() }

// ConversationKey is the NIP-44 conversation key of this key and pub (a
// NIP-PL executor key opening a lease encrypted to it).
func (k *Key) ConversationKey(pub string) ([32]byte, error) {
	return nip44.GenerateConversationKey(pub, k.secret)
}

// Sign sets the relay pubkey, id and BIP-340 signature on ev.
func (k *Key) Sign(_ context.Context, ev *nostr.Event) error {
	if err := ev.Sign(k.secret); err != nil {
		return fmt.Errorf("sign kind %d: %w", ev.Kind, err)
	}
	return nil
}

// LoadOrCreateFile reads a hex secret from path, or generates one and writes it
// there (mode 0600) when the file does not exist yet.
func LoadOrCreateFile(path string) (*Key, error) {
	h, err := LoadOrCreateHex(path, "relay key", func() (string, error) { return nostr.GeneratePrivateKey(), nil })
	if err != nil {
		return nil, err
	}
	k, err := FromHex(h)
	if err != nil {
		return nil, fmt.Errorf("read relay key %s: %w", path, err)
	}
	return k, nil
}

// LoadOrCreateHex returns the hex secret in the file at path, trimmed; when
// the file does not exist yet it writes create's secret there first (mode
// 0600, its directory 0700). Of processes creating it at once, all get
// the one that won. what names the secret in errors ("relay key").
func LoadOrCreateHex(path, what string, create func() (string, error)) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !os.IsNotExist(err) {
		return "", fmt.Errorf("read %s %s: %w", what, path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create %s directory: %w", what, err)
	}
	secret, err := create()
	if err != nil {
		return "", fmt.Errorf("new %s: %w", what, err)
	}
	// Written whole to a temporary file, then linked into place: a reader
	// never sees a half-written file, and of two creators the first link
	// wins.
	f, err := os.CreateTemp(filepath.Dir(path), ".new-*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("create %s %s: %w", what, path, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(secret + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if err := os.Link(f.Name(), path); err != nil {
		if os.IsExist(err) { // another process won the race: use its secret
			return LoadOrCreateHex(path, what, create)
		}
		return "", fmt.Errorf("create %s %s: %w", what, path, err)
	}
	return secret, nil
}

// Keyring is a Signer that holds one key per community (shared/service/community);
// as a plain Signer it signs for the deployment's default community.
type Keyring interface {
	Signer
	For(ctx context.Context, community string) (Signer, error)
}

// For returns the signer of community: sg's key for it when sg is a
// Keyring, else sg itself (a single-community relay and the tests).
func For(ctx context.Context, sg Signer, community string) (Signer, error) {
	if k, ok := sg.(Keyring); ok {
		return k.For(ctx, community)
	}
	return sg, nil
}

package community

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/buzzrelay/relay/shared/aws/kmssigner"
	"github.com/buzzrelay/relay/shared/domain/signer"
)

// Sealer protects community relay keys at rest, each bound to its
// community: KMS with the encryption context {"community": id} when
// deployed (and with local-kms), an AES-GCM key file locally.
type Sealer interface {
	Seal(ctx context.Context, community string, secret []byte) ([]byte, error)
	Open(ctx context.Context, community string, ciphertext []byte) (*signer.Key, error)
}

// KMSSealer seals with one KMS key for every community; the encryption
// context keeps their ciphertexts apart.
type KMSSealer struct {
	Client interface {
		kmssigner.EncryptAPI
		kmssigner.DecryptAPI
	}
	KeyID string
}

// Seal encrypts secret for community.
func (s KMSSealer) Seal(ctx context.Context, community string, secret []byte) ([]byte, error) {
	return kmssigner.Seal(ctx, s.Client, s.KeyID, community, secret)
}

// Open decrypts community's key.
func (s KMSSealer) Open(ctx context.Context, community string, ct []byte) (*signer.Key, error) {
	return kmssigner.Load(ctx, s.Client, ct, s.KeyID, community)
}

// LocalSealer is the local stand-in for KMS (make dev, tests): AES-256-GCM
// under a 32-byte key held in a file, the community id as associated data,
// so a ciphertext opens only for the community it was made for.
type LocalSealer struct{ aead cipher.AEAD }

// NewLocalSealer builds a sealer over a 32-byte key.
func NewLocalSealer(key []byte) (*LocalSealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("local seal key must be 32 bytes, got %d", len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("local seal key: %w", err)
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		return nil, fmt.Errorf("local seal key: %w", err)
	}
	return &LocalSealer{aead: g}, nil
}

// LocalSealerFromHex builds a sealer over a 64-character hex key.
func LocalSealerFromHex(h string) (*LocalSealer, error) {
	key, err := hex.DecodeString(strings.TrimSpace(h))
	if err != nil {
		return nil, fmt.Errorf("local seal key is not hex: %w", err)
	}
	return NewLocalSealer(key)
}

// LoadOrCreateLocalSealer reads the hex key at path, creating it (mode
// 0600) on first use.
func LoadOrCreateLocalSealer(path string) (*LocalSealer, error) {
	h, err := signer.LoadOrCreateHex(path, "local seal key", func() (string, error) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return "", err
		}
		return hex.EncodeToString(key), nil
	})
	if err != nil {
		return nil, err
	}
	s, err := LocalSealerFromHex(h)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return s, nil
}

func aad(community string) []byte { return []byte(kmssigner.ContextKey + "=" + community) }

// Seal encrypts secret for community.
func (s *LocalSealer) Seal(_ context.Context, community string, secret []byte) ([]byte, error) {
	if community == "" {
		return nil, errors.New("seal relay key: empty community")
	}
	if _, err := kmssigner.PublicKey(secret); err != nil {
		return nil, fmt.Errorf("seal relay key: %w", err)
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal relay key: nonce: %w", err)
	}
	return s.aead.Seal(nonce, nonce, secret, aad(community)), nil
}

// Open decrypts community's key.
func (s *LocalSealer) Open(_ context.Context, community string, ct []byte) (*signer.Key, error) {
	n := s.aead.NonceSize()
	if len(ct) < n {
		return nil, fmt.Errorf("open relay key of %q: ciphertext too short", community)
	}
	plain, err := s.aead.Open(nil, ct[:n], ct[n:], aad(community))
	if err != nil {
		return nil, fmt.Errorf("open relay key of %q: not sealed for this community with this key", community)
	}
	defer clear(plain)
	return signer.FromHex(hex.EncodeToString(plain))
}

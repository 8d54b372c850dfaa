// Package kmssigner holds the relay's secp256k1 secret as a KMS ciphertext.
//
// KMS cannot make BIP-340 Schnorr signatures, so the 32-byte secret is
// encrypted under a symmetric KMS key with the encryption context
// {"community": <community>}, stored (in the community row by the deploy-time
// trigger, shared/wiring/provision, which hands it to the functions as
// RELAY_KEY_CIPHERTEXT; an SSM parameter on older stacks), and decrypted once
// per cold start. The plaintext then lives only in memory, in
// the *signer.Key that does the signing.
package kmssigner

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/buzzrelay/relay/shared/domain/signer"
)

// ContextKey is the encryption-context key naming the community.
const ContextKey = "community"

// DecryptAPI is the KMS operation the signer needs at cold start.
type DecryptAPI interface {
	Decrypt(ctx context.Context, in *kms.DecryptInput, opts ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

// EncryptAPI is the KMS operation the key-creation command needs.
type EncryptAPI interface {
	Encrypt(ctx context.Context, in *kms.EncryptInput, opts ...func(*kms.Options)) (*kms.EncryptOutput, error)
}

// NewClient returns a KMS client for cfg. aws-sdk-go-v2 honours
// AWS_ENDPOINT_URL_KMS (local-kms in localdev) when cfg comes from
// awssdk.Load.
func NewClient(cfg aws.Config) *kms.Client { return kms.NewFromConfig(cfg) }

// EncryptionContext is the context every relay-key ciphertext is bound to.
func EncryptionContext(community string) map[string]string {
	return map[string]string{ContextKey: community}
}

// Load decrypts ciphertext (bound to community) and returns the relay key.
// keyID, when not empty, must be the key the ciphertext was made with: KMS
// refuses the call otherwise.
func Load(ctx context.Context, client DecryptAPI, ciphertext []byte, keyID, community string) (*signer.Key, error) {
	if len(ciphertext) == 0 {
		return nil, errors.New("kms relay key: empty ciphertext")
	}
	if community == "" {
		return nil, errors.New("kms relay key: empty community for the encryption context")
	}
	in := &kms.DecryptInput{
		CiphertextBlob:    ciphertext,
		EncryptionContext: EncryptionContext(community),
	}
	if keyID != "" {
		in.KeyId = aws.String(keyID)
	}
	out, err := client.Decrypt(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("kms relay key: decrypt (community %q): %w", community, err)
	}
	plain := out.Plaintext
	defer clear(plain)
	if err := checkSecret(plain); err != nil {
		return nil, fmt.Errorf("kms relay key: %w", err)
	}
	k, err := signer.FromHex(hex.EncodeToString(plain))
	if err != nil {
		return nil, fmt.Errorf("kms relay key: %w", err)
	}
	return k, nil
}

// Seal encrypts a 32-byte secret under keyID, bound to community.
func Seal(ctx context.Context, client EncryptAPI, keyID, community string, secret []byte) ([]byte, error) {
	if keyID == "" {
		return nil, errors.New("seal relay key: no KMS key id")
	}
	if community == "" {
		return nil, errors.New("seal relay key: empty community for the encryption context")
	}
	if err := checkSecret(secret); err != nil {
		return nil, fmt.Errorf("seal relay key: %w", err)
	}
	out, err := client.Encrypt(ctx, &kms.EncryptInput{
		KeyId:               aws.String(keyID),
		Plaintext:           secret,
		EncryptionContext:   EncryptionContext(community),
		EncryptionAlgorithm: types.EncryptionAlgorithmSpecSymmetricDefault,
	})
	if err != nil {
		return nil, fmt.Errorf("seal relay key: encrypt with %s: %w", keyID, err)
	}
	return out.CiphertextBlob, nil
}

// NewSecret returns a fresh random secp256k1 secret (32 bytes, 0 < s < n).
func NewSecret() ([]byte, error) {
	for {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("random relay key: %w", err)
		}
		if checkSecret(b) == nil {
			return b, nil
		}
	}
}

// PublicKey returns the hex x-only public key of a 32-byte secret.
func PublicKey(secret []byte) (string, error) {
	if err := checkSecret(secret); err != nil {
		return "", err
	}
	k, err := signer.FromHex(hex.EncodeToString(secret))
	if err != nil {
		return "", err
	}
	return k.PublicKey(), nil
}

// DecodeCiphertext reads the base64 form the ciphertext is stored in
// (standard or URL alphabet, padding optional, surrounding space ignored).
func DecodeCiphertext(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty ciphertext")
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("ciphertext is not base64")
}

// EncodeCiphertext is the stored form of a ciphertext (standard base64).
func EncodeCiphertext(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// checkSecret accepts exactly 32 bytes that form a valid secp256k1 scalar.
func checkSecret(b []byte) error {
	if len(b) != 32 {
		return fmt.Errorf("relay secret must be 32 bytes, got %d", len(b))
	}
	var s secp256k1.ModNScalar
	if overflow := s.SetByteSlice(b); overflow || s.IsZero() {
		return errors.New("relay secret is not a valid secp256k1 scalar")
	}
	s.Zero()
	return nil
}

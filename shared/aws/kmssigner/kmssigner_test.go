package kmssigner_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/aws/kmssigner"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// client talks to a real local-kms process on the loopback address.
func client(t *testing.T) *kms.Client {
	t.Helper()
	endpoint := testkit.StartKMS(t)
	return kms.New(kms.Options{
		Region:       testkit.KMSRegion,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  aws.NewCredentialsCache(staticCreds{}),
	})
}

type staticCreds struct{}

func (staticCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "test"}, nil
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestSealLoadSignVerify(t *testing.T) {
	c, k := ctx(t), client(t)
	secret, err := kmssigner.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	want, err := kmssigner.PublicKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := kmssigner.Seal(c, k, testkit.KMSAlias, "buzz.example", secret)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(ct, secret) {
		t.Fatal("ciphertext contains the plaintext secret")
	}
	// Round trip through the stored (base64) form.
	ct, err = kmssigner.DecodeCiphertext(kmssigner.EncodeCiphertext(ct) + "\n")
	if err != nil {
		t.Fatal(err)
	}

	key, err := kmssigner.Load(c, k, ct, testkit.KMSKeyARN, "buzz.example")
	if err != nil {
		t.Fatal(err)
	}
	if key.PublicKey() != want {
		t.Fatalf("pubkey %s, want %s", key.PublicKey(), want)
	}
	ev := &nostr.Event{Kind: 39000, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"d", "c0ffee"}}, Content: ""}
	if err := key.Sign(c, ev); err != nil {
		t.Fatal(err)
	}
	if ev.PubKey != want {
		t.Fatalf("event pubkey %s, want %s", ev.PubKey, want)
	}
	if ok, err := ev.CheckSignature(); err != nil || !ok {
		t.Fatalf("go-nostr rejects the signature: ok=%v err=%v", ok, err)
	}
	if ev.ID != ev.GetID() {
		t.Fatal("event id does not match its serialization")
	}

	// Without a key id KMS finds the key from the ciphertext itself.
	if _, err := kmssigner.Load(c, k, ct, "", "buzz.example"); err != nil {
		t.Fatalf("load without key id: %v", err)
	}
}

func TestWrongContextRefused(t *testing.T) {
	c, k := ctx(t), client(t)
	secret, _ := kmssigner.NewSecret()
	ct, err := kmssigner.Seal(c, k, testkit.KMSKeyID, "community-a", secret)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kmssigner.Load(c, k, ct, "", "community-b")
	if err == nil {
		t.Fatal("a ciphertext bound to community-a decrypted for community-b")
	}
	var invalid *types.InvalidCiphertextException
	if !errors.As(err, &invalid) {
		t.Fatalf("want InvalidCiphertextException, got %v", err)
	}
}

func TestWrongKeyRefused(t *testing.T) {
	c, k := ctx(t), client(t)
	other, err := k.CreateKey(c, &kms.CreateKeyInput{Description: aws.String("another key")})
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := kmssigner.NewSecret()
	ct, err := kmssigner.Seal(c, k, testkit.KMSKeyID, "default", secret)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kmssigner.Load(c, k, ct, *other.KeyMetadata.Arn, "default")
	// AWS answers IncorrectKeyException, local-kms InvalidCiphertextException:
	// either way KMS itself refused.
	var api smithy.APIError
	if !errors.As(err, &api) || (api.ErrorCode() != "IncorrectKeyException" && api.ErrorCode() != "InvalidCiphertextException") {
		t.Fatalf("want KMS to refuse a ciphertext of another key, got %v", err)
	}
}

func TestPlaintextThatIsNoKeyRefused(t *testing.T) {
	c, k := ctx(t), client(t)
	for name, plain := range map[string][]byte{
		"short": bytes.Repeat([]byte{1}, 31),
		"zero":  make([]byte, 32),
		"n":     mustHex(t, "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"),
	} {
		out, err := k.Encrypt(c, &kms.EncryptInput{
			KeyId:             aws.String(testkit.KMSKeyID),
			Plaintext:         plain,
			EncryptionContext: kmssigner.EncryptionContext("default"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kmssigner.Load(c, k, out.CiphertextBlob, "", "default"); err == nil {
			t.Errorf("%s: plaintext accepted as a relay key", name)
		}
		if _, err := kmssigner.Seal(c, k, testkit.KMSKeyID, "default", plain); err == nil {
			t.Errorf("%s: Seal accepted an invalid secret", name)
		}
	}
}

func TestDecodeCiphertext(t *testing.T) {
	for _, s := range []string{"", "  ", "not base64!"} {
		if _, err := kmssigner.DecodeCiphertext(s); err == nil {
			t.Errorf("%q decoded", s)
		}
	}
	b, err := kmssigner.DecodeCiphertext("AQID")
	if err != nil || !bytes.Equal(b, []byte{1, 2, 3}) {
		t.Fatalf("got %v %v", b, err)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

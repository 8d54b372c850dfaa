package config

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/aws/kmssigner"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

func load(t *testing.T, env map[string]string) *Config {
	t.Helper()
	c, err := Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantErr(t *testing.T, env map[string]string, substr string) {
	t.Helper()
	s, err := load(t, env).Signer(context.Background())
	if err == nil {
		t.Fatalf("env %v: got signer %s, want error containing %q", env, s.PublicKey(), substr)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("env %v: error %q does not mention %q", env, err, substr)
	}
}

func TestSignerMisconfigurationsFailAtStart(t *testing.T) {
	wantErr(t, map[string]string{"RELAY_SIGNER": "hsm"}, "RELAY_SIGNER must be local or kms")
	// KMS settings without RELAY_SIGNER=kms must not fall back to a local key.
	for _, v := range kmsOnlyVars {
		wantErr(t, map[string]string{v: "x"}, "set RELAY_SIGNER=kms")
		wantErr(t, map[string]string{"RELAY_SIGNER": "local", v: "x"}, "set RELAY_SIGNER=kms")
	}
	// Inside Lambda a fresh key file would be a random identity per cold start.
	wantErr(t, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "ingest", "RELAY_KEY_FILE": filepath.Join(t.TempDir(), "k")}, "needs RELAY_SECRET_KEY")
	wantErr(t, map[string]string{"RELAY_SIGNER": "kms"}, "needs RELAY_KEY_CIPHERTEXT")
	wantErr(t, map[string]string{"RELAY_SIGNER": "kms", "RELAY_KEY_CIPHERTEXT": "AQID", "RELAY_KEY_SSM_PARAMETER": "/p"}, "only one of")
	wantErr(t, map[string]string{"RELAY_SIGNER": "kms", "RELAY_KEY_CIPHERTEXT": "AQID", "RELAY_SECRET_KEY": strings.Repeat("1", 64)}, "must not be set")
	wantErr(t, map[string]string{"RELAY_SIGNER": "kms", "RELAY_KEY_CIPHERTEXT": "%%%", "AWS_REGION": "eu-west-2"}, "not base64")
}

func TestLocalSignerStillWorks(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	s, err := load(t, map[string]string{"RELAY_SECRET_KEY": sk}).Signer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if pk, _ := nostr.GetPublicKey(sk); s.PublicKey() != pk {
		t.Fatal("wrong pubkey")
	}
	path := filepath.Join(t.TempDir(), "relay.key")
	if _, err := load(t, map[string]string{"RELAY_KEY_FILE": path}).Signer(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestKMSSignerFromEnvironment(t *testing.T) {
	endpoint := testkit.StartKMS(t)
	testkit.IsolateKMS(t, endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	k := testkit.KMSClient(endpoint)
	secret, _ := kmssigner.NewSecret()
	want, _ := kmssigner.PublicKey(secret)
	ct, err := kmssigner.Seal(ctx, k, testkit.KMSAlias, "buzz.example", secret)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"RELAY_SIGNER":         "kms",
		"RELAY_KEY_CIPHERTEXT": kmssigner.EncodeCiphertext(ct),
		"RELAY_KMS_KEY_ID":     testkit.KMSKeyARN,
		"BUZZ_COMMUNITY":       "buzz.example",
		"AWS_REGION":           testkit.KMSRegion,
	}
	s, err := load(t, env).Signer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.PublicKey() != want {
		t.Fatalf("pubkey %s, want %s", s.PublicKey(), want)
	}
	ev := &nostr.Event{Kind: 39002, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"d", "x"}}}
	if err := s.Sign(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if ok, err := ev.CheckSignature(); !ok || err != nil {
		t.Fatalf("signature rejected: %v", err)
	}

	// The same ciphertext for another community is refused at start.
	env["BUZZ_COMMUNITY"] = "other"
	if _, err := load(t, env).Signer(ctx); err == nil || !strings.Contains(err.Error(), "InvalidCiphertext") {
		t.Fatalf("other community: want InvalidCiphertext, got %v", err)
	}
}

func TestDSN(t *testing.T) {
	ctx := context.Background()
	got, err := load(t, map[string]string{"DATABASE_URL": "postgres://a@b/c", "DB_SECRET_ARN": "arn:x"}).DSN(ctx)
	if err != nil || got != "postgres://a@b/c" {
		t.Fatalf("DATABASE_URL must win: %q %v", got, err)
	}
	if _, err := load(t, map[string]string{}).DSN(ctx); err == nil || !strings.Contains(err.Error(), "DATABASE_URL or DB_SECRET_ARN") {
		t.Fatalf("want a clear error, got %v", err)
	}
	if _, err := load(t, map[string]string{"DB_SECRET_ARN": "arn:x", "DB_SSLMODE": "sometimes"}).DSN(ctx); err == nil {
		t.Fatal("bad DB_SSLMODE accepted")
	}
}

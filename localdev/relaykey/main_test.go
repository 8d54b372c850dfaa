package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

func TestCreateKeyThenRelayUsesIt(t *testing.T) {
	endpoint := testkit.StartKMS(t)
	testkit.IsolateKMS(t, endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	run1 := func(stdin string, args ...string) Result {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, args, strings.NewReader(stdin), &out, os.Getenv); err != nil {
			t.Fatalf("relaykey %v: %v", args, err)
		}
		var r Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("output %q: %v", out.String(), err)
		}
		return r
	}

	r := run1("", "-kms-key", testkit.KMSAlias, "-community", "buzz.example")
	if len(r.PubKey) != 64 || r.Ciphertext == "" || r.Community != "buzz.example" {
		t.Fatalf("result %+v", r)
	}
	// What the relay does at cold start with that output.
	c, err := config.Load(func(k string) string {
		return map[string]string{
			"RELAY_SIGNER": "kms", "RELAY_KEY_CIPHERTEXT": r.Ciphertext,
			"BUZZ_COMMUNITY": "buzz.example", "RELAY_KMS_KEY_ID": testkit.KMSKeyARN,
			"AWS_REGION": testkit.KMSRegion,
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Signer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.PublicKey() != r.PubKey {
		t.Fatalf("relay pubkey %s, relaykey printed %s", s.PublicKey(), r.PubKey)
	}

	// Two runs, two identities.
	if r2 := run1("", "-kms-key", testkit.KMSKeyID, "-community", "buzz.example"); r2.PubKey == r.PubKey {
		t.Fatal("a second run reused the key")
	}

	// Importing an existing secret keeps its pubkey.
	k := testkit.NewKey(t)
	sk, pk := k.Secret, k.Pub
	if r3 := run1(sk+"\n", "-kms-key", testkit.KMSKeyID, "-secret-stdin"); r3.PubKey != pk || r3.Community != "default" {
		t.Fatalf("imported key: %+v, want pubkey %s community default", r3, pk)
	}
}

func TestFlagsChecked(t *testing.T) {
	ctx := context.Background()
	env := func(string) string { return "" }
	for _, args := range [][]string{
		{},
		{"-kms-key", "k", "-community", ""},
		{"-kms-key", "k", "extra"},
	} {
		if err := run(ctx, args, strings.NewReader(""), &bytes.Buffer{}, env); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if err := run(ctx, []string{"-kms-key", "k", "-secret-stdin"}, strings.NewReader("zz\n"), &bytes.Buffer{}, env); err == nil {
		t.Error("non-hex secret accepted")
	}
}

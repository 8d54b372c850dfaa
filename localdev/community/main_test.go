package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/s3local"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

func TestCommandAddListDisableRotate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env := map[string]string{"DATABASE_URL": testkit.NewDatabase(t), "RELAY_SEAL_KEY": nostr.GeneratePrivateKey()}
	getenv := func(k string) string { return env[k] }
	do := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, getenv, &out)
		return out.String(), err
	}
	op := testkit.NewKey(t).Pub
	out, err := do("add", "-id", "bees", "-host", "bees.example,Hive.Example", "-name", "Bees", "-operator", op)
	if err != nil || !strings.Contains(out, "relay pubkey ") {
		t.Fatalf("add: %q %v", out, err)
	}
	pub := strings.TrimSpace(out[strings.LastIndex(out, " ")+1:])
	if _, err := do("add", "-id", "wasps", "-host", "hive.example", "-name", "Wasps"); err == nil || !strings.Contains(err.Error(), "invalid: hostname hive.example is already taken") {
		t.Fatalf("add on a taken hostname: %v", err)
	}
	for _, bad := range [][]string{{"add", "-host", "x.example"}, {"add", "-id", "Bad Id", "-host", "x.example"}, {"add", "-id", "x"}, {"disable"}, {"frobnicate"}, {}} {
		if _, err := do(bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	out, err = do("list")
	if err != nil || !strings.Contains(out, "bees\tbees.example,hive.example\tBees\t"+pub+"\tenabled") || strings.Contains(out, "wasps") {
		t.Fatalf("list: %q %v", out, err)
	}
	out, err = do("rotate-key", "-id", "bees")
	if err != nil || strings.Contains(out, pub) || !strings.Contains(out, "pubkey ") {
		t.Fatalf("rotate-key: %q %v", out, err)
	}
	if _, err := do("disable", "-id", "bees"); err != nil {
		t.Fatal(err)
	}
	if out, _ = do("list"); !strings.Contains(out, "\tdisabled ") {
		t.Fatalf("list after disable: %q", out)
	}
	if _, err := do("disable", "-id", "nobody"); err == nil {
		t.Fatal("disabling an unknown community succeeded")
	}
	if _, err := do("enable", "-id", "bees"); err != nil {
		t.Fatal(err)
	}
	if out, _ = do("list"); !strings.Contains(out, "\tenabled") {
		t.Fatalf("list after enable: %q", out)
	}
}

// TestCommandWritesTheDirectory: the operator command rewrites a
// community's directory documents with each change (in the bucket the
// relay finds them, MEDIA_BUCKET here), so a relay reading them refuses a
// community the command disabled at once, without its database; refresh
// rewrites every document.
func TestCommandWritesTheDirectory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := s3local.ForTest(t, "media")
	env := map[string]string{"DATABASE_URL": testkit.NewDatabase(t), "RELAY_SEAL_KEY": nostr.GeneratePrivateKey(),
		"MEDIA_BUCKET": "media", "AWS_ENDPOINT_URL_S3": srv.URL, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}
	getenv := func(k string) string { return env[k] }
	do := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, args, getenv, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	do("add", "-id", "bees", "-host", "bees.example", "-name", "Bees")
	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, env["DATABASE_URL"], store.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	relay, err := cfg.OpenDirectory(ctx, st)
	if err != nil || relay == nil {
		t.Fatalf("directory: %v %v", relay, err)
	}
	if c, err := relay.Resolve(ctx, "bees.example"); err != nil || c.Name != "Bees" {
		t.Fatalf("after add: %+v %v", c, err)
	}
	do("disable", "-id", "bees")
	before := st.Statements()
	if _, err := relay.Resolve(ctx, "bees.example"); err == nil {
		t.Fatal("the community the command disabled is still served")
	}
	if n := st.Statements() - before; n != 0 {
		t.Fatalf("the refusal ran %d statements, want 0", n)
	}
	do("enable", "-id", "bees")
	if out := do("refresh"); !strings.Contains(out, "rewritten") {
		t.Fatalf("refresh: %q", out)
	}
	if _, err := relay.Resolve(ctx, "bees.example"); err != nil {
		t.Fatalf("enabled again: %v", err)
	}
}

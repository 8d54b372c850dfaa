package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
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

package community_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

func open(t *testing.T) (*store.Store, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return testkit.NewStore(t, store.Options{MaxConns: 4}), ctx
}

func sealer(t *testing.T) *community.LocalSealer {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	s, err := community.NewLocalSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A relay with no hostname registered serves every host as its default
// community; once one is registered only registered hostnames resolve, a
// new community is served within the TTL, and a disabled one is unknown.
func TestRegistryResolvesRegisteredHostsOnly(t *testing.T) {
	st, ctx := open(t)
	reg := community.NewRegistry(st, "default")
	reg.TTL = 0
	if c, err := reg.Resolve(ctx, "anything.example:8080"); err != nil || c.ID != "default" {
		t.Fatalf("no hostnames yet: %v %v", c, err)
	}
	s := sealer(t)
	pub, err := community.Create(ctx, st, s, nil, community.Spec{ID: "b", Hosts: []string{"B.Example:443"}, Name: "Bee"})
	if err != nil || !nostr.IsValid32ByteHex(pub) {
		t.Fatalf("create: %q %v", pub, err)
	}
	c, err := reg.Resolve(ctx, "b.example")
	if err != nil || c.ID != "b" || c.Name != "Bee" || c.RelayPubkey != pub || len(c.Hosts) != 1 || c.Hosts[0] != "b.example" {
		t.Fatalf("b.example: %+v %v", c, err)
	}
	if _, err := reg.Resolve(ctx, "anything.example"); !community.Unknown(err) {
		t.Fatalf("unregistered host once hostnames exist: %v, want unknown", err)
	}
	if _, err := reg.ResolveID(ctx, "anything.example"); !rejected(err, reject.Restricted) {
		t.Fatalf("ResolveID of an unknown host: %v, want restricted:", err)
	}
	if _, err := community.Create(ctx, st, s, nil, community.Spec{ID: "c", Hosts: []string{"b.example"}}); !rejected(err, reject.Invalid) {
		t.Fatalf("a taken hostname: %v, want invalid:", err)
	}
	if cs, _ := community.List(ctx, st); len(cs) != 2 {
		t.Fatalf("the refused community was stored: %d communities", len(cs))
	}
	if err := community.Disable(ctx, st, "b", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Resolve(ctx, "b.example"); !community.Unknown(err) {
		t.Fatalf("disabled community: %v, want unknown", err)
	}
	if err := community.Disable(ctx, st, "nope", nil); err == nil {
		t.Fatal("disabling an unknown community succeeded")
	}
}

// The cache holds a found community for the TTL, so a warm instance asks
// once; a miss is asked again, so a new community is served at once.
func TestRegistryCachesForTTL(t *testing.T) {
	st, ctx := open(t)
	s := sealer(t)
	early := community.NewRegistry(st, "default")
	early.TTL = time.Hour
	if _, err := community.Create(ctx, st, s, nil, community.Spec{ID: "a", Hosts: []string{"a.example"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := early.Resolve(ctx, "b.example"); !community.Unknown(err) {
		t.Fatalf("before b exists: %v", err)
	}
	if _, err := community.Create(ctx, st, s, nil, community.Spec{ID: "b", Hosts: []string{"b.example"}}); err != nil {
		t.Fatal(err)
	}
	if c, err := early.Resolve(ctx, "b.example"); err != nil || c.ID != "b" {
		t.Fatalf("b right after it was added: %v %v", c, err)
	}
	reg := community.NewRegistry(st, "default")
	reg.TTL = time.Hour
	if _, err := reg.Resolve(ctx, "b.example"); err != nil {
		t.Fatal(err)
	}
	if err := community.Disable(ctx, st, "b", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Resolve(ctx, "b.example"); err != nil {
		t.Fatalf("within the TTL: %v", err)
	}
	reg.Forget()
	if _, err := reg.Resolve(ctx, "b.example"); !community.Unknown(err) {
		t.Fatalf("after Forget: %v", err)
	}
}

// Each community signs with its own key, opened once per instance; the
// default community without a stored key signs with the configured one; a
// rotated key is picked up.
func TestKeysPerCommunity(t *testing.T) {
	st, ctx := open(t)
	s := sealer(t)
	def := testkit.RelayKey(t)
	pubB, err := community.Create(ctx, st, s, nil, community.Spec{ID: "b", Hosts: []string{"b.example"}})
	if err != nil {
		t.Fatal(err)
	}
	reg := community.NewRegistry(st, "default")
	reg.TTL = 0
	keys := community.NewKeys(reg, s, def)
	for i := 0; i < 3; i++ {
		sg, err := keys.For(ctx, "b")
		if err != nil || sg.PublicKey() != pubB {
			t.Fatalf("b: %v %v", sg, err)
		}
		ev := &nostr.Event{Kind: 39000, Tags: nostr.Tags{{"d", "x"}}}
		if err := sg.Sign(ctx, ev); err != nil || ev.PubKey != pubB {
			t.Fatalf("sign: %v", err)
		}
		if ok, _ := ev.CheckSignature(); !ok {
			t.Fatal("bad signature")
		}
	}
	if keys.Opens() != 1 {
		t.Fatalf("b's key opened %d times, want 1", keys.Opens())
	}
	if sg, err := keys.For(ctx, "default"); err != nil || sg.PublicKey() != def.PublicKey() {
		t.Fatalf("default: %v %v", sg, err)
	}
	if _, err := keys.For(ctx, "nope"); err == nil {
		t.Fatal("unknown community got a key")
	}
	pub2, err := community.RotateKey(ctx, st, s, "b", nil)
	if err != nil || pub2 == pubB {
		t.Fatalf("rotate: %q %v", pub2, err)
	}
	if sg, err := keys.For(ctx, "b"); err != nil || sg.PublicKey() != pub2 {
		t.Fatalf("after rotation: %v %v", sg, err)
	}
}

// A sealed key opens only for the community it was sealed for.
func TestLocalSealerBindsCommunity(t *testing.T) {
	s := sealer(t)
	secret, _ := hex.DecodeString(nostr.GeneratePrivateKey())
	ct, err := s.Seal(context.Background(), "b", secret)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := s.Open(context.Background(), "b", ct); err != nil || k.PublicKey() == "" {
		t.Fatalf("open for b: %v", err)
	}
	if _, err := s.Open(context.Background(), "c", ct); err == nil {
		t.Fatal("b's key opened for c")
	}
	if _, err := sealer(t).Open(context.Background(), "b", ct); err == nil {
		t.Fatal("opened with another seal key")
	}
}

func TestCheckHost(t *testing.T) {
	for in, want := range map[string]string{"A.Example": "a.example", "a.example:8080": "a.example", "127.0.0.1": "127.0.0.1", "[::1]:80": "::1"} {
		if got, err := community.CheckHost(in); err != nil || got != want {
			t.Errorf("CheckHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "https://a.example", "a.example/x", "a b", "-a.example"} {
		if _, err := community.CheckHost(in); err == nil {
			t.Errorf("CheckHost(%q) accepted", in)
		}
	}
}

func rejected(err error, prefix reject.Prefix) bool {
	r, ok := reject.As(err)
	return ok && r.Prefix == prefix
}

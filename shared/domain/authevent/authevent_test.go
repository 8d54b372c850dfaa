package authevent

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
)

const (
	relayURL = "wss://relay.example"
	httpURL  = "https://relay.example/events"
	hash     = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

var now = time.Unix(1_800_000_000, 0)

// protocols runs one check through each of the three, each with the
// binding tags a valid event of it carries.
var protocols = []struct {
	name   string
	kind   int
	prefix reject.Prefix
	tags   nostr.Tags
	check  func(Checker, *nostr.Event) *reject.Error
}{
	{"NIP-42", kinds.Auth, reject.Invalid, nostr.Tags{{"challenge", "c1"}, {"relay", relayURL}},
		func(c Checker, ev *nostr.Event) *reject.Error { return c.NIP42(ev, "c1", []string{relayURL}) }},
	{"NIP-98", kinds.HTTPAuth, reject.AuthRequired, nostr.Tags{{"u", httpURL}, {"method", "POST"}},
		func(c Checker, ev *nostr.Event) *reject.Error { return c.NIP98(ev, HTTP{Method: "POST", URL: httpURL}) }},
	{"BUD-01", kinds.BlossomAuth, reject.AuthRequired, nostr.Tags{{"t", "upload"}, {"x", hash}, {"expiration", strconv.FormatInt(now.Unix()+600, 10)}},
		func(c Checker, ev *nostr.Event) *reject.Error {
			return c.BUD01(ev, Blob{Verbs: []string{"upload"}, Hash: hash, Host: "relay.example"})
		}},
}

// signAs signs ev with sk, keeping ev.PubKey as the caller spelled it
// (go-nostr's Sign would overwrite it with the lowercase key).
func signAs(t *testing.T, sk *btcec.PrivateKey, ev *nostr.Event) {
	t.Helper()
	id := sha256.Sum256(ev.Serialize())
	ev.ID = hex.EncodeToString(id[:])
	sig, err := schnorr.Sign(sk, id[:])
	if err != nil {
		t.Fatal(err)
	}
	ev.Sig = hex.EncodeToString(sig.Serialize())
}

// TestSharedChecksOfEveryAuthEvent holds the three protocols to the same
// checks in the same order (kind, pubkey, id, signature, created_at within
// MaxSkew), each refusal with its protocol's prefix; only BUD-01 takes an
// old created_at (its expiration bounds the past).
func TestSharedChecksOfEveryAuthEvent(t *testing.T) {
	sk, _ := btcec.NewPrivateKey()
	pub := hex.EncodeToString(schnorr.SerializePubKey(sk.PubKey()))
	for _, p := range protocols {
		build := func(edit func(*nostr.Event), after func(*nostr.Event)) *nostr.Event {
			ev := &nostr.Event{Kind: p.kind, PubKey: pub, CreatedAt: nostr.Timestamp(now.Unix()), Tags: append(nostr.Tags{}, p.tags...)}
			if edit != nil {
				edit(ev)
			}
			signAs(t, sk, ev)
			if after != nil {
				after(ev)
			}
			return ev
		}
		at := func(d time.Duration) func(*nostr.Event) {
			return func(ev *nostr.Event) { ev.CreatedAt = nostr.Timestamp(now.Add(d).Unix()) }
		}
		cases := []struct {
			name        string
			edit, after func(*nostr.Event)
			want        string // "" accepted
		}{
			{name: "valid"},
			{name: "wrong kind", edit: func(ev *nostr.Event) { ev.Kind = 1 }, want: "kind"},
			{name: "tampered content", after: func(ev *nostr.Event) { ev.Content = "x" }, want: "id does not match"},
			{name: "bad signature", after: func(ev *nostr.Event) { ev.Sig = strings.Repeat("0", 128) }, want: "sign"},
			{name: "no signature", after: func(ev *nostr.Event) { ev.Sig = "" }, want: "sign"},
			{name: "created MaxSkew ahead", edit: at(MaxSkew)},
			{name: "created MaxSkew ago", edit: at(-MaxSkew)},
			{name: "created past MaxSkew ahead", edit: at(MaxSkew + time.Second), want: "created_at"},
			{name: "created past MaxSkew ago", edit: at(-MaxSkew - time.Second), want: map[bool]string{true: "", false: "created_at"}[p.kind == kinds.BlossomAuth]},
		}
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				rej := p.check(Checker{Now: now}, build(c.edit, c.after))
				if c.want == "" {
					if rej != nil {
						t.Fatalf("refused: %v", rej)
					}
					return
				}
				if rej == nil || rej.Prefix != p.prefix || !strings.Contains(rej.Reason, c.want) {
					t.Fatalf("got %v, want a %s refusal saying %q", rej, p.prefix, c.want)
				}
			})
		}
	}
}

// TestAuthEventWithUppercasePubkeyIsRefused: an event whose pubkey is
// the signer's key in uppercase hex hashes and verifies, but names no
// nostr key (NIP-01 keys are lowercase) and would authenticate a caller
// under a spelling no membership row holds. NIP-42 refused it; NIP-98 and
// BUD-01 accepted it until they shared NIP-42's check.
func TestAuthEventWithUppercasePubkeyIsRefused(t *testing.T) {
	sk, _ := btcec.NewPrivateKey()
	pub := strings.ToUpper(hex.EncodeToString(schnorr.SerializePubKey(sk.PubKey())))
	for _, p := range protocols {
		ev := &nostr.Event{Kind: p.kind, PubKey: pub, CreatedAt: nostr.Timestamp(now.Unix()), Tags: p.tags}
		signAs(t, sk, ev)
		if rej := p.check(Checker{Sigs: sigverify.New(sigverify.Options{}), Now: now}, ev); rej == nil || rej.Prefix != p.prefix {
			t.Errorf("%s: an uppercase pubkey got %v, want a %s refusal", p.name, rej, p.prefix)
		}
	}
}

// TestNIP42Binding: the challenge of this connection and a relay tag
// naming one of its URLs, nothing else.
func TestNIP42Binding(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	sign := func(tags ...nostr.Tag) *nostr.Event {
		ev := &nostr.Event{Kind: kinds.Auth, CreatedAt: nostr.Timestamp(now.Unix()), Tags: tags}
		if err := ev.Sign(sk); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	urls := []string{"wss://relay.example", "wss://relay.example/prod"}
	for _, c := range []struct {
		name string
		ev   *nostr.Event
		want string
	}{
		{"the stage URL, spelled otherwise", sign(nostr.Tag{"challenge", "c1"}, nostr.Tag{"relay", "WSS://Relay.Example/prod/"}), ""},
		{"another connection's challenge", sign(nostr.Tag{"challenge", "c2"}, nostr.Tag{"relay", relayURL}), "invalid: AUTH challenge tag does not match"},
		{"no challenge", sign(nostr.Tag{"relay", relayURL}), "invalid: AUTH challenge tag does not match"},
		{"another relay", sign(nostr.Tag{"challenge", "c1"}, nostr.Tag{"relay", "wss://evil.example/" + strings.Repeat("a", 40)}),
			`invalid: AUTH relay tag "wss://evil.example/aaaaaaaaaaaaa…" does not name this relay (wss://relay.example or wss://relay.example/prod)`},
		{"no relay", sign(nostr.Tag{"challenge", "c1"}), `invalid: AUTH relay tag "" does not name`},
	} {
		t.Run(c.name, func(t *testing.T) { expect(t, Checker{Now: now}.NIP42(c.ev, "c1", urls), c.want) })
	}
}

// TestNIP98Binding: u, method and payload (required when asked).
func TestNIP98Binding(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	body := []byte(`{"kind":9}`)
	sum := sha256.Sum256(body)
	sign := func(tags ...nostr.Tag) *nostr.Event {
		ev := &nostr.Event{Kind: kinds.HTTPAuth, CreatedAt: nostr.Timestamp(now.Unix()), Tags: tags}
		if err := ev.Sign(sk); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	req := HTTP{Method: "POST", URL: httpURL, Body: body}
	must := req
	must.RequirePayload = true
	for _, c := range []struct {
		name string
		ev   *nostr.Event
		r    HTTP
		want string
	}{
		{"bound to the body", sign(nostr.Tag{"u", httpURL}, nostr.Tag{"method", "post"}, nostr.Tag{"payload", hex.EncodeToString(sum[:])}), must, ""},
		{"no payload, not required", sign(nostr.Tag{"u", httpURL + "/"}, nostr.Tag{"method", "POST"}), req, ""},
		{"no payload, required", sign(nostr.Tag{"u", httpURL}, nostr.Tag{"method", "POST"}), must, "auth-required: auth event has no payload tag"},
		{"another body", sign(nostr.Tag{"u", httpURL}, nostr.Tag{"method", "POST"}, nostr.Tag{"payload", hash}), req, "auth-required: auth event payload hash"},
		{"user info", sign(nostr.Tag{"u", "https://me@relay.example/events"}, nostr.Tag{"method", "POST"}), req, "auth-required: auth event u tag must be an absolute URL"},
		{"fragment", sign(nostr.Tag{"u", httpURL + "#x"}, nostr.Tag{"method", "POST"}), req, "auth-required: auth event u tag must be an absolute URL"},
		{"another path", sign(nostr.Tag{"u", "https://relay.example/query"}, nostr.Tag{"method", "POST"}), req, "auth-required: auth event u tag"},
		{"no method", sign(nostr.Tag{"u", httpURL}), req, "auth-required: auth event has no method tag"},
		{"another method", sign(nostr.Tag{"u", httpURL}, nostr.Tag{"method", "GET"}), req, `auth-required: auth event method "GET" does not match POST`},
	} {
		t.Run(c.name, func(t *testing.T) { expect(t, Checker{Now: now}.NIP98(c.ev, c.r), c.want) })
	}
}

// expect fails t unless rej is nil for want "", else a refusal starting
// with want.
func expect(t *testing.T, rej *reject.Error, want string) {
	t.Helper()
	switch {
	case want == "" && rej != nil:
		t.Fatalf("refused: %v", rej)
	case want != "" && (rej == nil || !strings.HasPrefix(rej.Error(), want)):
		t.Fatalf("got %v, want %q", rej, want)
	}
}

// FuzzParse (moved from nip98 with the parser): any header gives an event
// or an auth-required: refusal, never a panic.
func FuzzParse(f *testing.F) {
	f.Add("Nostr eyJraW5kIjoyNzIzNX0=")
	f.Add("nostr !!")
	f.Add("")
	f.Add("Nostr " + base64.RawURLEncoding.EncodeToString([]byte(`{"kind":24242}`)))
	f.Fuzz(func(t *testing.T, header string) {
		ev, err := Parse(header)
		if err == nil && ev == nil {
			t.Fatal("nil event without error")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "auth-required: ") {
			t.Fatalf("refusal %q is not auth-required: (401)", err)
		}
	})
}

// FuzzServerHost (moved from blossom with serverHost): any server tag
// value gives a hostname or "", never a panic.
func FuzzServerHost(f *testing.F) {
	f.Add("https://Relay.Example:443/")
	f.Add("relay.example/x")
	f.Add("::%zz")
	f.Fuzz(func(t *testing.T, v string) {
		_ = serverHost(v)
	})
}

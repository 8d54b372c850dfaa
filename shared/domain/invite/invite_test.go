package invite

import (
	"errors"
	"github.com/buzzrelay/relay/shared/domain/records"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

func TestCodesCarryAtLeast128BitsAndAreNeverRepeated(t *testing.T) {
	if CodeBytes*8 < 128 {
		t.Fatalf("codes carry %d bits", CodeBytes*8)
	}
	seen := map[string]bool{}
	for range 1000 {
		c, err := NewCode()
		if err != nil {
			t.Fatal(err)
		}
		if len(c) != 32 || strings.ToLower(c) != c || strings.ContainsAny(c, "/?#= ") {
			t.Fatalf("code %q: want 32 lowercase base32 characters", c)
		}
		if seen[c] {
			t.Fatalf("code %q twice", c)
		}
		seen[c] = true
	}
}

func TestStoredHashIgnoresPastedWhitespace(t *testing.T) {
	if Hash("abc") != Hash("  abc\n") || Hash("abc") == Hash("abd") || len(Hash("abc")) != 64 {
		t.Fatal("Hash must be the SHA-256 hex of the trimmed code")
	}
}

func TestInviteTermsAreBounded(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	in := func(v int) *int { return &v }
	cases := []struct {
		name string
		ttl  *int64
		uses *int
		want Terms
		bad  bool
	}{
		{"defaults: 72 h, unlimited", nil, nil, Terms{TTL: DefaultTTL}, false},
		{"shortest", i64(MinTTL), in(1), Terms{TTL: MinTTL, MaxUses: 1}, false},
		{"longest, most uses", i64(MaxTTL), in(MaxUses), Terms{TTL: MaxTTL, MaxUses: MaxUses}, false},
		{"too short", i64(MinTTL - 1), nil, Terms{}, true},
		{"too long", i64(MaxTTL + 1), nil, Terms{}, true},
		{"negative ttl", i64(-1), nil, Terms{}, true},
		{"zero uses", nil, in(0), Terms{}, true},
		{"too many uses", nil, in(MaxUses + 1), Terms{}, true},
	}
	for _, c := range cases {
		got, err := NewTerms(c.ttl, c.uses)
		if c.bad {
			if r, ok := reject.As(err); !ok || r.Prefix != reject.Invalid {
				t.Errorf("%s: %v, want invalid:", c.name, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
	if FlotillaTerms.MaxUses != 1 {
		t.Error("a 28935's invite must be single-use")
	}
}

func TestRemainingUses(t *testing.T) {
	if Remaining(0, 5) != nil {
		t.Error("unlimited must have no count")
	}
	if n := Remaining(10, 3); n == nil || *n != 7 {
		t.Errorf("10 - 3 = %v", n)
	}
	if n := Remaining(1, 2); n == nil || *n != 0 {
		t.Errorf("never below zero: %v", n)
	}
}

func TestOnlyAReqForKind28935AloneMintsAnInvite(t *testing.T) {
	cases := []struct {
		f    []nostr.Filter
		want bool
	}{
		{[]nostr.Filter{{Kinds: []int{28935}, Limit: 1}}, true},
		{[]nostr.Filter{{Kinds: []int{28935}}, {Kinds: []int{28935}}}, true},
		{[]nostr.Filter{{Kinds: []int{28935, 1}}}, false},
		{[]nostr.Filter{{Kinds: []int{28935}}, {Kinds: []int{9}}}, false},
		{[]nostr.Filter{{}}, false},
		{nil, false},
	}
	for _, c := range cases {
		if got := AsksForInvite(c.f); got != c.want {
			t.Errorf("%v: %v, want %v", c.f, got, c.want)
		}
	}
	if tags := InviteTags("x"); len(tags) != 2 || tags[0][0] != "-" || tags[1][0] != "claim" || tags[1][1] != "x" {
		t.Errorf("28935 tags %v", tags)
	}
}

func TestJoinRequestNeedsFreshnessNotProtection(t *testing.T) {
	const now = 1_700_000_000
	cases := []struct {
		name  string
		at    int64
		tags  nostr.Tags
		claim string
		bad   bool
	}{
		{"protected with a claim", now, nostr.Tags{{"-"}, {"claim", "abc"}}, "abc", false},
		{"protected without a claim", now, nostr.Tags{{"-"}}, "", false},
		{"no NIP-70 tag, as Flotilla sends it", now, nostr.Tags{{"claim", "abc"}}, "abc", false},
		{"stale", now - nip43.Freshness - 1, nostr.Tags{{"-"}, {"claim", "abc"}}, "", true},
		{"from the future", now + nip43.Freshness + 1, nostr.Tags{{"-"}, {"claim", "abc"}}, "", true},
	}
	for _, c := range cases {
		got, err := ParseJoin(&nostr.Event{CreatedAt: nostr.Timestamp(c.at), Tags: c.tags}, now)
		if (err != nil) != c.bad || got != c.claim {
			t.Errorf("%s: %q %v", c.name, got, err)
		}
	}
}

func TestAcceptanceReceiptIsBoundToCodeVersionAndSecret(t *testing.T) {
	const now = 1_700_000_000
	p := Policy{Version: "v1", Terms: "be nice", AgeRequired: true, Secret: []byte("0123456789abcdef0123456789abcdef")}
	if _, err := Accept(p, "code", "v0", true, now); err == nil {
		t.Fatal("an old version accepted")
	}
	if _, err := Accept(p, "code", "v1", false, now); err == nil {
		t.Fatal("accepted without the age attestation it asks for")
	}
	rc, err := Accept(p, "code", "v1", true, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckReceipt(p, "code", rc, now+10); err != nil {
		t.Fatalf("own receipt refused: %v", err)
	}
	other := p
	other.Version = "v2"
	rotated := p
	rotated.Secret = []byte("another secret, another policy..")
	for name, check := range map[string]error{
		"another code":      CheckReceipt(p, "code2", rc, now),
		"a newer version":   CheckReceipt(other, "code", rc, now),
		"another secret":    CheckReceipt(rotated, "code", rc, now),
		"expired":           CheckReceipt(p, "code", rc, now+ReceiptTTL+1),
		"garbage":           CheckReceipt(p, "code", "!!", now),
		"empty":             CheckReceipt(p, "code", "", now),
		"truncated receipt": CheckReceipt(p, "code", rc[:len(rc)-2], now),
	} {
		if !errors.Is(check, ErrPolicyRequired) {
			t.Errorf("%s: %v, want ErrPolicyRequired", name, check)
		}
	}
}

func TestPolicyChecks(t *testing.T) {
	if CheckPolicy(Policy{Version: " "}) == nil || CheckPolicy(Policy{Version: strings.Repeat("v", MaxPolicyVersion+1)}) == nil ||
		CheckPolicy(Policy{Version: "1", Terms: strings.Repeat("x", MaxPolicyText+1)}) == nil || CheckPolicy(Policy{Version: "1"}) != nil {
		t.Fatal("policy bounds")
	}
}

func TestEveryUnusableClaimGetsOneAnswer(t *testing.T) {
	if r, ok := reject.As(ErrInvalid); !ok || r.Prefix != reject.Restricted {
		t.Fatal("ErrInvalid must be restricted:")
	}
	if Usable("") || Usable("   ") || Usable(strings.Repeat("a", MaxCodeLength+1)) || !Usable("abc") {
		t.Fatal("Usable")
	}
}

// A claim's refusals, as Buzz's relay tells them apart: one answer for a
// code that is unknown here, revoked or whose creator lost the right;
// expired and used up told apart, expiry first.
func TestRefusal(t *testing.T) {
	const now = 1000
	live := records.InviteState{CreatorAllowed: true, ExpiresAt: now + 60, MaxUses: 2, Uses: 1}
	with := func(f func(*records.InviteState)) records.InviteState { s := live; f(&s); return s }
	for _, c := range []struct {
		name  string
		st    records.InviteState
		found bool
		want  error
	}{
		{"live", live, true, nil},
		{"unlimited", with(func(s *records.InviteState) { s.MaxUses, s.Uses = 0, 500 }), true, nil},
		{"unknown", records.InviteState{}, false, ErrInvalid},
		{"revoked", with(func(s *records.InviteState) { s.Revoked = true }), true, ErrInvalid},
		{"revoked and expired", with(func(s *records.InviteState) { s.Revoked, s.ExpiresAt = true, now }), true, ErrInvalid},
		{"creator demoted", with(func(s *records.InviteState) { s.CreatorAllowed = false }), true, ErrInvalid},
		{"expired", with(func(s *records.InviteState) { s.ExpiresAt = now }), true, ErrExpired},
		{"expired and used up", with(func(s *records.InviteState) { s.ExpiresAt, s.Uses = now-1, 2 }), true, ErrExpired},
		{"used up", with(func(s *records.InviteState) { s.Uses = 2 }), true, ErrUsedUp},
	} {
		if got := Refusal(c.st, c.found, now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	for _, e := range []error{ErrInvalid, ErrExpired, ErrUsedUp} {
		if r, ok := reject.As(e); !ok || r.Prefix != reject.Restricted {
			t.Errorf("%v must be restricted:", e)
		}
	}
}

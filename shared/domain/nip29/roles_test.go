package nip29_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
)

func TestParsePutUser(t *testing.T) {
	pk := strings.Repeat("ab", 32)
	ev := func(ts ...[]string) *nostr.Event { return &nostr.Event{Kind: 9000, Tags: tags(ts...)} }
	for _, c := range []struct {
		name string
		ev   *nostr.Event
		role string
		err  string
	}{
		{"no role keeps or defaults", ev([]string{"h", "c"}, []string{"p", pk}), "", ""},
		{"NIP-29 p role", ev([]string{"p", pk, "admin"}), "admin", ""},
		{"Buzz role tag", ev([]string{"p", pk}, []string{"role", "admin"}), "admin", ""},
		{"role tag before p", ev([]string{"role", "owner"}, []string{"p", pk}), "owner", ""},
		{"both agree", ev([]string{"p", pk, "member"}, []string{"role", "member"}), "member", ""},
		{"both disagree", ev([]string{"p", pk, "member"}, []string{"role", "admin"}), "", "invalid: the p tag's role"},
		{"empty role tag is none", ev([]string{"p", pk}, []string{"role", ""}), "", ""},
		// Issue 28: NIP-29 lets clients name roles; unknown names are
		// stored without privilege (they were refused before).
		{"unknown role", ev([]string{"p", pk}, []string{"role", "moderator"}), "moderator", ""},
		{"unknown p role", ev([]string{"p", pk, "king"}), "king", ""},
		{"several p roles: the privileged one", ev([]string{"p", pk, "gardener", "admin"}), "admin", ""},
		{"Buzz 39002 form", ev([]string{"p", pk, "", "admin"}), "admin", ""},
		{"role too long", ev([]string{"p", pk, strings.Repeat("r", 33)}), "", "invalid: role"},
		{"role with a space", ev([]string{"p", pk}, []string{"role", "a b"}), "", "invalid: role"},
		{"no p", ev([]string{"role", "admin"}), "", "invalid: put-user needs a p tag"},
		{"bad key", ev([]string{"p", "xyz"}), "", "invalid: p tag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := nip29.ParsePutUser(c.ev)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got.Pubkey != pk || got.Role != c.role {
				t.Fatalf("got %+v, %v; want role %q", got, err, c.role)
			}
		})
	}
}

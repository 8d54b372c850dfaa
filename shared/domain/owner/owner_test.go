package owner

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip19"
)

// The owner given at deploy is read the same whether it is an npub or
// hex, and anything else (an nsec above all) is refused rather than
// stored as an operator.
func TestParseOwnerAcceptsNpubOrHexOnly(t *testing.T) {
	const hex = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
	npub, err := nip19.EncodePublicKey(hex)
	if err != nil {
		t.Fatal(err)
	}
	nsec, _ := nip19.EncodePrivateKey(hex)
	note, _ := nip19.EncodeNote(hex)
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"  ", "", true},
		{hex, hex, true},
		{strings.ToUpper(hex), hex, true},
		{npub, hex, true},
		{" " + npub + "\n", hex, true},
		{nsec, "", false},
		{note, "", false},
		{npub[:len(npub)-1] + "x", "", false},
		{hex[:63], "", false},
		{hex + "0", "", false},
		{"npub1", "", false},
		{"zz" + hex[2:], "", false},
	} {
		got, err := Parse(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("Parse(%q) = %q, %v; want %q ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

package eventcheck

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// NIP-ER's tag rules for kind 30300, case by case: the d tag, not_before's
// grammar and count, and the expiration after it.
func TestReminder(t *testing.T) {
	d := nostr.Tag{"d", "a3f8c2e1b4d79600e5d2f1a8c3b6094d"}
	alt := nostr.Tag{"alt", "Encrypted reminder"}
	cases := []struct {
		name string
		tags nostr.Tags
		want string // "" accepted, else the refusal
	}{
		{"create", nostr.Tags{d, {"not_before", "1770000000"}, alt}, ""},
		{"far future", nostr.Tags{d, {"not_before", "9007199254740991"}}, ""},
		{"zero", nostr.Tags{d, {"not_before", "0"}}, ""},
		{"complete: no not_before, an expiration", nostr.Tags{d, alt, {"expiration", "1777542730"}}, ""},
		{"expiration after not_before", nostr.Tags{d, {"not_before", "100"}, {"expiration", "101"}}, ""},
		{"unparsable expiration is not NIP-ER's", nostr.Tags{d, {"not_before", "100"}, {"expiration", "soon"}}, ""},
		{"no d", nostr.Tags{{"not_before", "1"}}, "invalid: a reminder (kind 30300) needs exactly one non-empty d tag"},
		{"empty d", nostr.Tags{{"d", ""}}, "invalid: a reminder (kind 30300) needs exactly one non-empty d tag"},
		{"valueless d", nostr.Tags{{"d"}}, "invalid: a reminder (kind 30300) needs exactly one non-empty d tag"},
		{"two d", nostr.Tags{d, {"d", "other"}}, "invalid: a reminder (kind 30300) needs exactly one non-empty d tag"},
		{"two not_before", nostr.Tags{d, {"not_before", "1"}, {"not_before", "1"}}, "invalid: malformed not_before"},
		{"valueless", nostr.Tags{d, {"not_before"}}, "invalid: malformed not_before"},
		{"empty", nostr.Tags{d, {"not_before", ""}}, "invalid: malformed not_before"},
		{"leading zero", nostr.Tags{d, {"not_before", "0123"}}, "invalid: malformed not_before"},
		{"sign", nostr.Tags{d, {"not_before", "+123"}}, "invalid: malformed not_before"},
		{"negative", nostr.Tags{d, {"not_before", "-1"}}, "invalid: malformed not_before"},
		{"space", nostr.Tags{d, {"not_before", " 123"}}, "invalid: malformed not_before"},
		{"decimal point", nostr.Tags{d, {"not_before", "123.0"}}, "invalid: malformed not_before"},
		{"exponent", nostr.Tags{d, {"not_before", "1e9"}}, "invalid: malformed not_before"},
		{"non-ASCII digit", nostr.Tags{d, {"not_before", "١٢٣"}}, "invalid: malformed not_before"},
		{"past 2^53-1", nostr.Tags{d, {"not_before", "9007199254740992"}}, "invalid: malformed not_before"},
		{"overflows int64", nostr.Tags{d, {"not_before", "99999999999999999999"}}, "invalid: malformed not_before"},
		{"expiration equal", nostr.Tags{d, {"not_before", "100"}, {"expiration", "100"}}, "invalid: expiration before not_before"},
		{"expiration before", nostr.Tags{d, {"not_before", "100"}, {"expiration", "99"}}, "invalid: expiration before not_before"},
	}
	for _, c := range cases {
		err := Reminder(c.tags)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

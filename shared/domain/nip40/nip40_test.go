package nip40

import (
	"errors"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

func TestExpirationRule(t *testing.T) {
	const now = 1_800_000_000
	for _, c := range []struct {
		name    string
		tags    nostr.Tags
		expired bool
		refused bool
	}{
		{"no tag", nostr.Tags{{"h", "g"}}, false, false},
		{"future", nostr.Tags{{"expiration", "1800000001"}}, false, false},
		{"now is expired", nostr.Tags{{"expiration", "1800000000"}}, true, true},
		{"past", nostr.Tags{{"expiration", "1000"}}, true, true},
		{"first tag counts", nostr.Tags{{"expiration", "1000"}, {"expiration", "1900000000"}}, true, true},
		{"not a number", nostr.Tags{{"expiration", "soon"}}, false, true},
		{"negative", nostr.Tags{{"expiration", "-5"}}, false, true},
		{"no value", nostr.Tags{{"expiration"}}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Expired(c.tags, now); got != c.expired {
				t.Errorf("Expired = %v, want %v", got, c.expired)
			}
			err := Check(c.tags, now)
			if (err != nil) != c.refused {
				t.Fatalf("Check = %v, refused want %v", err, c.refused)
			}
			var re *reject.Error
			if err != nil && (!errors.As(err, &re) || re.Prefix != reject.Invalid) {
				t.Errorf("Check = %v, want an invalid: refusal", err)
			}
		})
	}
}

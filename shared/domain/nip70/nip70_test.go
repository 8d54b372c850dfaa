package nip70

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

func TestProtectedEventOnlyFromItsAuthor(t *testing.T) {
	author, other := "aa", "bb"
	for _, c := range []struct {
		name   string
		tags   nostr.Tags
		authed string
		want   reject.Prefix // "" accepted
	}{
		{"unprotected from anyone", nostr.Tags{{"h", "g"}}, other, ""},
		{"unprotected unauthenticated", nostr.Tags{}, "", ""},
		{"protected from its author", nostr.Tags{{"-"}}, author, ""},
		{"protected among other tags", nostr.Tags{{"h", "g"}, {"-"}}, author, ""},
		{"protected from another key", nostr.Tags{{"-"}}, other, reject.Restricted},
		{"protected unauthenticated", nostr.Tags{{"-"}}, "", reject.AuthRequired},
		{"a value after the marker still protects", nostr.Tags{{"-", "x"}}, other, reject.Restricted},
		{"a tag named differently does not", nostr.Tags{{"--"}}, other, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(&nostr.Event{PubKey: author, Tags: c.tags}, c.authed)
			r, _ := reject.As(err)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (r == nil || r.Prefix != c.want):
				t.Errorf("got %v, want a %s: refusal", err, c.want)
			}
		})
	}
}

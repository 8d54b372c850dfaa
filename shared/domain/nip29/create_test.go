package nip29_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
)

func TestParseCreate(t *testing.T) {
	id := "9b353519-f4fe-4757-aef4-bec6cc0ae54c"
	ev := func(ts ...[]string) *nostr.Event { return &nostr.Event{Kind: 9007, Tags: tags(ts...)} }
	cases := []struct {
		name     string
		ev       *nostr.Event
		typ, vis string
		err      string
	}{
		{"defaults", ev([]string{"h", id}, []string{"name", "n"}), "stream", "open", ""},
		{"private forum", ev([]string{"h", id}, []string{"name", "n"}, []string{"channel_type", "forum"}, []string{"visibility", "private"}), "forum", "private", ""},
		{"system is private", ev([]string{"h", id}, []string{"name", "n"}, []string{"channel_type", "system"}), "system", "private", ""},
		{"system open on request", ev([]string{"h", id}, []string{"name", "n"}, []string{"channel_type", "system"}, []string{"visibility", "open"}), "system", "open", ""},
		{"no h", ev([]string{"name", "n"}), "", "", "invalid: channel create needs an h tag"},
		{"h not a uuid", ev([]string{"h", "general"}, []string{"name", "n"}), "", "", "invalid: channel id"},
		{"uppercase uuid is stored lowercase", ev([]string{"h", strings.ToUpper(id)}, []string{"name", "n"}), "stream", "open", ""},
		{"valueless t", ev([]string{"h", id}, []string{"name", "n"}, []string{"t"}), "", "", "invalid: a t tag needs a value"},
		{"no name", ev([]string{"h", id}), "", "", "invalid: channel create needs a non-empty name"},
		{"blank name", ev([]string{"h", id}, []string{"name", "  "}), "", "", "invalid: channel create needs a non-empty name"},
		{"unknown type", ev([]string{"h", id}, []string{"name", "n"}, []string{"channel_type", "voice"}), "", "", "invalid: channel_type"},
		{"unknown visibility", ev([]string{"h", id}, []string{"name", "n"}, []string{"visibility", "secret"}), "", "", "invalid: visibility"},
		{"bad label", ev([]string{"h", id}, []string{"name", "n"}, []string{"t", "dm"}), "", "", "invalid: label"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := nip29.ParseCreate(c.ev)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("want %q, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != c.typ || got.Visibility != c.vis || got.ID != id {
				t.Fatalf("got %s/%s, want %s/%s", got.Type, got.Visibility, c.typ, c.vis)
			}
		})
	}
}

package nip62_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip62"
)

const (
	author = "aa00000000000000000000000000000000000000000000000000000000000000"
	other  = "bb00000000000000000000000000000000000000000000000000000000000000"
)

// The request-to-vanish rule: only its authenticated author, never
// expiring, naming this relay by host and port (any spelling of its URL, the
// loopback names alike) or ALL_RELAYS; anything else refused with its
// prefix and the reason.
func TestCheckRequestToVanish(t *testing.T) {
	relay := func(v ...string) nostr.Tags {
		var tags nostr.Tags
		for _, s := range v {
			tags = append(tags, nostr.Tag{"relay", s})
		}
		return tags
	}
	for _, c := range []struct {
		name         string
		tags         nostr.Tags
		host, authed string
		want         string // "" accepted, else the refusal's prefix
	}{
		{"this relay", relay("wss://relay.example/"), "wss://relay.example", author, ""},
		{"this relay, other spelling", relay("WSS://Relay.Example:443"), "wss://relay.example", author, ""},
		{"this relay over HTTP", relay("wss://relay.example"), "https://relay.example", author, ""},
		{"all relays", relay(nip62.AllRelays), "wss://relay.example", author, ""},
		{"one of several", relay("wss://a.example", "wss://relay.example"), "wss://relay.example", author, ""},
		{"loopback spellings", relay("ws://localhost:8080"), "ws://127.0.0.1:8080", author, ""},
		{"loopback, another port", relay("ws://127.0.0.1:1"), "ws://127.0.0.1:8080", author, "invalid:"},
		{"same host, another port", relay("wss://relay.example:8443"), "wss://relay.example", author, "invalid:"},
		{"same host, default port of another scheme", relay("ws://relay.example"), "wss://relay.example", author, "invalid:"},
		{"written default port", relay("ws://relay.example:80"), "ws://relay.example", author, ""},
		{"another relay", relay("wss://other.example"), "wss://relay.example", author, "invalid:"},
		{"a subdomain is another relay", relay("wss://x.relay.example"), "wss://relay.example", author, "invalid:"},
		{"an http URL is no relay URL", relay("https://relay.example"), "wss://relay.example", author, "invalid:"},
		{"no relay tag", nil, "wss://relay.example", author, "invalid:"},
		{"unknown origin names only ALL_RELAYS", relay("wss://relay.example"), "", author, "invalid:"},
		{"expiring", append(relay(nip62.AllRelays), nostr.Tag{"expiration", "9999999999"}), "wss://relay.example", author, "invalid:"},
		{"unauthenticated", relay(nip62.AllRelays), "wss://relay.example", "", "auth-required:"},
		{"relayed by another key", relay(nip62.AllRelays), "wss://relay.example", other, "restricted:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := &nostr.Event{Kind: nip62.Kind, PubKey: author, Tags: c.tags}
			err := nip62.Check(ev, c.host, c.authed)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Fatalf("got %v, want %s", err, c.want)
			}
		})
	}
	// Other kinds are not its business.
	if err := nip62.Check(&nostr.Event{Kind: 1, PubKey: author}, "", ""); err != nil {
		t.Fatal(err)
	}
}

// A repost names the author and time of the event it embeds; anything
// else names nothing.
func TestReposted(t *testing.T) {
	inner := `{"id":"x","pubkey":"` + author + `","created_at":1700000000,"kind":1,"tags":[],"content":"hi","sig":"y"}`
	for _, c := range []struct {
		kind    int
		content string
		ok      bool
	}{
		{nip62.Repost, inner, true},
		{nip62.GenericRepost, inner, true},
		{nip62.Repost, "", false},
		{nip62.Repost, "not json", false},
		{nip62.Repost, `{"content":"no author"}`, false},
		{1, inner, false},
	} {
		pk, at, ok := nip62.Reposted(&nostr.Event{Kind: c.kind, Content: c.content})
		if ok != c.ok || (ok && (pk != author || at != 1700000000)) {
			t.Errorf("kind %d %.20q: got %q %d %v", c.kind, c.content, pk, at, ok)
		}
	}
}

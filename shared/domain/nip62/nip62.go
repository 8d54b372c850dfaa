// Package nip62 is NIP-62's request to vanish, pure: a kind 62 whose relay
// tags name this relay (its URL, matched by host and port) or ALL_RELAYS, from
// its authenticated author, asks the relay to delete everything of its key
// and to refuse those events again. The 62 itself is kept as the
// tombstone: an event of the key (or a repost, kind 6 or 16, embedding
// one) created at or before the newest stored 62 is refused
// (store.Tx.BansCheck asks Reposted).
package nip62

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
)

const (
	// Kind is the request to vanish.
	Kind = kinds.Vanish
	// AllRelays in a relay tag names every relay.
	AllRelays = "ALL_RELAYS"
	// Repost and GenericRepost (NIP-18) carry the reposted event in their
	// content.
	Repost        = 6
	GenericRepost = 16
)

// Names reports whether a relay tag of tags names the relay the request
// reached at origin (scheme://host[:port], as the client addressed it):
// ALL_RELAYS, or a ws/wss URL of the same host and port (each port the
// written one or its scheme's default; the loopback names are one
// machine, but ws://127.0.0.1:1 is not a relay on :8080). It also reports
// whether the event has any relay tag at all.
func Names(tags nostr.Tags, origin string) (names, any bool) {
	for _, t := range tags {
		if len(t) < 2 || t[0] != "relay" {
			continue
		}
		any = true
		v := strings.TrimSpace(t[1])
		if v == AllRelays {
			return true, true
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "wss" && u.Scheme != "ws") || origin == "" {
			continue
		}
		if relayurl.SameEndpoint(v, origin) {
			return true, true
		}
	}
	return false, any
}

// Check is the rule for a kind 62 reaching this relay at origin
// (scheme://host[:port] as addressed; "" unknown), with authed
// the key that authenticated the request: only its author may send it
// (auth-required: without a key, restricted: from another, so a relayed or
// forged request does nothing), it may not expire (the tombstone must
// stay), and it must name this relay or ALL_RELAYS (invalid: otherwise,
// nothing deleted). Other kinds pass.
func Check(ev *nostr.Event, origin, authed string) error {
	if ev.Kind != Kind {
		return nil
	}
	switch authed {
	case ev.PubKey:
	case "":
		return reject.New(reject.AuthRequired, "a request to vanish (NIP-62) is accepted only from its authenticated author")
	default:
		return reject.Restrictedf("a request to vanish (NIP-62) is accepted only from its author, not relayed by another key")
	}
	if ev.Tags.Find("expiration") != nil {
		return reject.Invalidf("a request to vanish (NIP-62) cannot carry an expiration: it stays as the tombstone")
	}
	names, any := Names(ev.Tags, origin)
	switch {
	case !any:
		return reject.Invalidf("a request to vanish (NIP-62) needs a relay tag: this relay's URL or %s", AllRelays)
	case !names:
		return reject.Invalidf("this request to vanish (NIP-62) names other relays, not this one (%s); nothing was deleted", origin)
	}
	return nil
}

// Reposted is the author and created_at of the event a repost (kind 6 or
// 16) carries in its content; ok is false for other kinds and for a
// content that is not an event.
func Reposted(ev *nostr.Event) (pubkey string, createdAt int64, ok bool) {
	if ev.Kind != Repost && ev.Kind != GenericRepost || !strings.HasPrefix(strings.TrimSpace(ev.Content), "{") {
		return "", 0, false
	}
	var inner struct {
		PubKey    string `json:"pubkey"`
		CreatedAt int64  `json:"created_at"`
	}
	if err := json.Unmarshal([]byte(ev.Content), &inner); err != nil || inner.PubKey == "" {
		return "", 0, false
	}
	return inner.PubKey, inner.CreatedAt, true
}

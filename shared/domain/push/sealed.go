package push

import (
	"encoding/json"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// NIP-9a's sealed form, the one Flotilla signs (src/app/util/push.ts): in
// public only d and p (the relay's NIP-11 self key); relay, filter, ignore
// and callback NIP-44 encrypted to self in the content, a JSON array of
// tags. The public form carries them as tags (ParseSubscription).

// MaxSealedContent bounds a sealed subscription's content.
const MaxSealedContent = 16 << 10

// Sealed reports whether ev is a subscription of the sealed form and the
// key it is sealed to: content, a p tag, and no relay tag in public.
func Sealed(ev *nostr.Event) (self string, ok bool) {
	if ev.Content == "" {
		return "", false
	}
	for _, t := range ev.Tags {
		if len(t) > 0 && t[0] == "relay" {
			return "", false
		}
	}
	for _, t := range ev.Tags {
		if len(t) >= 2 && t[0] == "p" {
			return t[1], true
		}
	}
	return "", false
}

// Unseal is ev as ParseSubscription reads it: its public d tags, then the
// tags of plain (the decrypted content: a JSON array of string arrays),
// without any d or p of plain's own. ev itself is unchanged.
func Unseal(ev *nostr.Event, plain string) (*nostr.Event, error) {
	var sealed [][]string
	if err := json.Unmarshal([]byte(plain), &sealed); err != nil {
		return nil, reject.Invalidf("push subscription: the sealed content is not a JSON array of tags")
	}
	out := *ev
	out.Tags = nil
	for _, t := range ev.Tags {
		if len(t) > 0 && t[0] == "d" {
			out.Tags = append(out.Tags, t)
		}
	}
	for _, t := range sealed {
		if len(t) > 0 && t[0] != "d" && t[0] != "p" {
			out.Tags = append(out.Tags, nostr.Tag(t))
		}
	}
	return &out, nil
}

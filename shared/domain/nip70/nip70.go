// Package nip70 is NIP-70 protected events, pure: an event carrying the
// ["-"] tag is accepted only from its author, authenticated (NIP-42 on the
// WebSocket, NIP-98 on POST /events). The ingest pipeline asks Check once,
// before any database work, for every door alike.
package nip70

import (
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Tag is NIP-70's marker: a tag whose only element is "-".
const Tag = "-"

// Protected reports whether tags carry the ["-"] tag.
func Protected(tags nostr.Tags) bool {
	for _, t := range tags {
		if len(t) >= 1 && t[0] == Tag {
			return true
		}
	}
	return false
}

// Check is the rule: a protected event is refused unless authed, the key
// that authenticated the request, is its author: auth-required: without
// one, restricted: for another key. An event without the tag passes.
func Check(ev *nostr.Event, authed string) error {
	if !Protected(ev.Tags) {
		return nil
	}
	switch authed {
	case ev.PubKey:
		return nil
	case "":
		return reject.New(reject.AuthRequired, "this event is protected (NIP-70): authenticate as its author to publish it")
	}
	return reject.Restrictedf("this event is protected (NIP-70): only its author may publish it")
}

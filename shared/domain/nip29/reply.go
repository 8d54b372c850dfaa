package nip29

import (
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
)

// Reply is the thread position a message asks for.
type Reply struct {
	Parent, Root string // Root is "" when the client named none
	Broadcast    bool
}

// ParseReply reads NIP-10 marked e tags. Only a "reply" marker makes a reply;
// "root" alone (or no marker) does not. ok is false for a non-reply.
func ParseReply(tags nostr.Tags) (r Reply, ok bool) {
	for _, t := range tags {
		if len(t) >= 4 && t[0] == "e" {
			switch t[3] {
			case "reply":
				r.Parent = t[1]
			case "root":
				r.Root = t[1]
			}
		}
	}
	if v, has := filter.TagValue(tags, "broadcast"); has && (v == "1" || v == "true") {
		r.Broadcast = true
	}
	return r, r.Parent != ""
}

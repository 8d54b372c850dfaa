package nip29

import (
	"strconv"

	"github.com/nbd-wtf/go-nostr"
)

// Channel is what the state events describe.
type Channel struct {
	ID, Name, About, Picture string
	Type, Visibility         string
	Labels                   []string
	Creator                  string
	CreatedAt                int64
}

// MemberRole is one active member.
type MemberRole struct {
	Pubkey, Role string
}

// identity returns the NIP-CL identity tags: t type, t labels, P creator.
func identity(ch *Channel) nostr.Tags {
	tags := nostr.Tags{{"t", ch.Type}}
	for _, l := range ch.Labels {
		tags = append(tags, nostr.Tag{"t", l})
	}
	return append(tags, nostr.Tag{"P", ch.Creator})
}

// MetadataTags builds a 39000's tags: d, identity, created_at, then NIP-29's
// name/about/picture, public|private, open|closed and hidden for a private
// system channel.
func MetadataTags(ch *Channel) nostr.Tags {
	tags := nostr.Tags{{"d", ch.ID}}
	tags = append(tags, identity(ch)...)
	tags = append(tags, nostr.Tag{"created_at", strconv.FormatInt(ch.CreatedAt, 10)})
	tags = append(tags, nostr.Tag{"name", ch.Name})
	if ch.About != "" {
		tags = append(tags, nostr.Tag{"about", ch.About})
	}
	if ch.Picture != "" {
		tags = append(tags, nostr.Tag{"picture", ch.Picture})
	}
	tags = append(tags, nostr.Tag{"channel_type", ch.Type})
	if ch.Visibility == Private {
		tags = append(tags, nostr.Tag{"private"}, nostr.Tag{"closed"})
		if ch.Type == TypeSystem {
			tags = append(tags, nostr.Tag{"hidden"})
		}
	} else {
		tags = append(tags, nostr.Tag{"public"}, nostr.Tag{"open"})
	}
	return tags
}

// AdminsTags builds a 39001's tags: d, identity, then ["p", key, role] for
// each owner and admin.
func AdminsTags(ch *Channel, members []MemberRole) nostr.Tags {
	tags := nostr.Tags{{"d", ch.ID}}
	tags = append(tags, identity(ch)...)
	for _, m := range members {
		if m.Role == Owner || m.Role == Admin {
			tags = append(tags, nostr.Tag{"p", m.Pubkey, m.Role})
		}
	}
	return tags
}

// MembersTags builds a 39002's tags: d, identity, then per member
// ["p", key, <relay hint>, role], the form Buzz clients read the role from
// (index 3); the relay hint is left empty.
func MembersTags(ch *Channel, members []MemberRole) nostr.Tags {
	tags := nostr.Tags{{"d", ch.ID}}
	tags = append(tags, identity(ch)...)
	for _, m := range members {
		tags = append(tags, nostr.Tag{"p", m.Pubkey, "", m.Role})
	}
	return tags
}

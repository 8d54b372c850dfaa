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
	// NIP-29: the flags (Flags.Private is Visibility private), the kinds
	// the group takes (nil: every kind) and its parent group ("" for a
	// root; one that does not exist is published as a root).
	Flags
	SupportedKinds []int
	Parent         string
	// Archived: Buzz's archive (a 9002 ["archived","true"]): every write
	// is refused but the 9002 that unarchives; reads go on.
	Archived bool
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
// name (when set), about, picture, Buzz's channel_type, public|private,
// open|closed, restricted, hidden, supported_kinds, parent and (Buzz's)
// ["archived","true"] while archived.
func MetadataTags(ch *Channel) nostr.Tags {
	tags := nostr.Tags{{"d", ch.ID}}
	tags = append(tags, identity(ch)...)
	tags = append(tags, nostr.Tag{"created_at", strconv.FormatInt(ch.CreatedAt, 10)})
	if ch.Name != "" {
		tags = append(tags, nostr.Tag{"name", ch.Name})
	}
	if ch.About != "" {
		tags = append(tags, nostr.Tag{"about", ch.About})
	}
	if ch.Picture != "" {
		tags = append(tags, nostr.Tag{"picture", ch.Picture})
	}
	tags = append(tags, nostr.Tag{"channel_type", ch.Type})
	tags = append(tags, map[bool]nostr.Tag{true: {FlagPrivate}, false: {FlagPublic}}[ch.Private])
	tags = append(tags, map[bool]nostr.Tag{true: {FlagClosed}, false: {FlagOpen}}[ch.Closed])
	if ch.Hidden {
		tags = append(tags, nostr.Tag{FlagHidden})
	}
	if ch.Restricted {
		tags = append(tags, nostr.Tag{FlagRestricted})
	}
	if ch.SupportedKinds != nil {
		t := nostr.Tag{"supported_kinds"}
		for _, k := range ch.SupportedKinds {
			t = append(t, strconv.Itoa(k))
		}
		tags = append(tags, t)
	}
	if ch.Parent != "" {
		tags = append(tags, nostr.Tag{"parent", ch.Parent})
	}
	if ch.Archived {
		tags = append(tags, nostr.Tag{ArchivedTag, "true"})
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

// RolesTags builds a 39003's tags: d, identity, then ["role", name,
// description] for each role this relay gives privileges to (NIP-29).
func RolesTags(ch *Channel) nostr.Tags {
	tags := nostr.Tags{{"d", ch.ID}}
	tags = append(tags, identity(ch)...)
	for _, r := range RoleDescriptions {
		tags = append(tags, nostr.Tag{"role", r[0], r[1]})
	}
	return tags
}

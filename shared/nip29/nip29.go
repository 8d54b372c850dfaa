// Package nip29 holds the channel rules of NIP-29 and NIP-CL that need no
// database: parsing create/edit/moderation tags, label rules, role order,
// thread markers, and the tag lists of the relay-signed state events.
package nip29

import (
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/reject"
)

// Channel types and visibilities.
var (
	Types        = []string{"stream", "forum", "dm", "workflow", "system"}
	Visibilities = []string{"open", "private"}
)

// Roles, highest first.
const (
	Owner  = "owner"
	Admin  = "admin"
	Member = "member"
)

// MaxLabels is the most distinct labels a channel may carry.
const MaxLabels = 8

// RoleRank orders roles: owner 3, admin 2, member 1, anything else 0.
func RoleRank(role string) int {
	switch role {
	case Owner:
		return 3
	case Admin:
		return 2
	case Member:
		return 1
	}
	return 0
}

// IsType reports whether s names a channel type.
func IsType(s string) bool { return contains(Types, s) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ChannelTag returns the channel id of the first h tag, lowercased: channel
// ids are UUIDs, compared case-insensitively and stored in lower case.
func ChannelTag(tags nostr.Tags) (string, bool) {
	v, ok := Tag(tags, "h")
	return strings.ToLower(v), ok
}

// ValidChannelID accepts a lowercase hyphenated UUID (ChannelTag lowers the
// form a client sent).
func ValidChannelID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// ValidLabel reports whether l is 1-64 characters of a-z 0-9 . : - and not a
// channel type name.
func ValidLabel(l string) bool {
	if len(l) < 1 || len(l) > 64 || IsType(l) {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// Labels reads the t tags of a 9007 or 9002. present is false when the event
// has no t tag at all (9002: leave labels as they are). A set of only
// ["t",""] tags clears (present, empty). The whole event is rejected for an
// invalid or reserved label, more than MaxLabels distinct labels, or ""
// mixed with labels, and for a valueless ["t"] (neither a label nor the
// clearing ["t",""]). Repeats are stored once, first occurrence first.
func Labels(tags nostr.Tags) (labels []string, present bool, err error) {
	clear := false
	seen := map[string]bool{}
	for _, t := range tags {
		if len(t) < 1 || t[0] != "t" {
			continue
		}
		present = true
		if len(t) < 2 {
			return nil, true, reject.Invalidf(`a t tag needs a value: ["t", <label>], or ["t", ""] to clear`)
		}
		if t[1] == "" {
			clear = true
			continue
		}
		l := t[1]
		if IsType(l) {
			return nil, true, reject.Invalidf("label %q is a channel type name and is reserved", l)
		}
		if !ValidLabel(l) {
			return nil, true, reject.Invalidf("label %q must be 1-64 characters of a-z, 0-9, '.', ':' and '-'", l)
		}
		if !seen[l] {
			seen[l] = true
			labels = append(labels, l)
		}
	}
	if clear && len(labels) > 0 {
		return nil, true, reject.Invalidf(`["t",""] clears the labels and cannot be combined with other labels`)
	}
	if len(labels) > MaxLabels {
		return nil, true, reject.Invalidf("%d distinct labels, the limit is %d", len(labels), MaxLabels)
	}
	if labels == nil {
		labels = []string{}
	}
	return labels, present, nil
}

// Tag returns the value of the first tag named name, and whether there is one.
func Tag(tags nostr.Tags, name string) (string, bool) {
	for _, t := range tags {
		if len(t) >= 2 && t[0] == name {
			return t[1], true
		}
	}
	return "", false
}

// Create is a parsed kind 9007.
type Create struct {
	ID, Name, About, Picture string
	Type, Visibility         string
	Labels                   []string
}

// ParseCreate reads a 9007: h (UUID), name required, optional visibility,
// channel_type, about, picture and labels. A system channel is private unless
// it asks for ["visibility","open"]; other channels default to open.
func ParseCreate(ev *nostr.Event) (*Create, error) {
	c := &Create{}
	var ok bool
	if c.ID, ok = ChannelTag(ev.Tags); !ok {
		return nil, reject.Invalidf("channel create needs an h tag with the channel id")
	}
	if !ValidChannelID(c.ID) {
		return nil, reject.Invalidf("channel id %q must be a UUID", c.ID)
	}
	c.Name, _ = Tag(ev.Tags, "name")
	if strings.TrimSpace(c.Name) == "" {
		return nil, reject.Invalidf("channel create needs a non-empty name tag")
	}
	c.About, _ = Tag(ev.Tags, "about")
	c.Picture, _ = Tag(ev.Tags, "picture")
	c.Type = "stream"
	if v, ok := Tag(ev.Tags, "channel_type"); ok {
		if !IsType(v) {
			return nil, reject.Invalidf("channel_type %q must be one of %s", v, strings.Join(Types, ", "))
		}
		c.Type = v
	}
	c.Visibility = "open"
	if c.Type == "system" {
		c.Visibility = "private"
	}
	if v, ok := Tag(ev.Tags, "visibility"); ok {
		if !contains(Visibilities, v) {
			return nil, reject.Invalidf("visibility %q must be open or private", v)
		}
		c.Visibility = v
	}
	labels, _, err := Labels(ev.Tags)
	if err != nil {
		return nil, err
	}
	c.Labels = labels
	return c, nil
}

// Edit is a parsed kind 9002; nil fields stay as they are.
type Edit struct {
	Name, About, Picture, Visibility *string
	Labels                           []string
	LabelsSet                        bool
}

// ParseEdit reads a 9002's name, about, picture, visibility and labels.
func ParseEdit(ev *nostr.Event) (*Edit, error) {
	e := &Edit{}
	if v, ok := Tag(ev.Tags, "name"); ok {
		if strings.TrimSpace(v) == "" {
			return nil, reject.Invalidf("name cannot be empty")
		}
		e.Name = &v
	}
	if v, ok := Tag(ev.Tags, "about"); ok {
		e.About = &v
	}
	if v, ok := Tag(ev.Tags, "picture"); ok {
		e.Picture = &v
	}
	if v, ok := Tag(ev.Tags, "visibility"); ok {
		if !contains(Visibilities, v) {
			return nil, reject.Invalidf("visibility %q must be open or private", v)
		}
		e.Visibility = &v
	}
	// NIP-29's bare public/private tags are honoured too.
	for _, t := range ev.Tags {
		if len(t) == 1 && (t[0] == "public" || t[0] == "private") {
			v := map[string]string{"public": "open", "private": "private"}[t[0]]
			e.Visibility = &v
		}
	}
	labels, present, err := Labels(ev.Tags)
	if err != nil {
		return nil, err
	}
	e.Labels, e.LabelsSet = labels, present
	return e, nil
}

// PutUser is a parsed kind 9000: the target and the role to give. Role is
// "" when the event names none: an existing member keeps their role and a
// new user becomes a member.
type PutUser struct {
	Pubkey, Role string
}

// ParsePutUser reads the p tag of a 9000 and its role, given either as
// NIP-29's third p element (["p", key, role]) or as a separate
// ["role", role] tag, the form Buzz clients send. Both at once must agree.
func ParsePutUser(ev *nostr.Event) (*PutUser, error) {
	var p *PutUser
	for _, t := range ev.Tags {
		if len(t) >= 2 && t[0] == "p" {
			if !nostr.IsValid32ByteHex(t[1]) {
				return nil, reject.Invalidf("p tag %q is not a 64-hex public key", t[1])
			}
			p = &PutUser{Pubkey: t[1]}
			if len(t) >= 3 {
				p.Role = t[2]
			}
			break
		}
	}
	if p == nil {
		return nil, reject.Invalidf("put-user needs a p tag naming the user")
	}
	if r, ok := Tag(ev.Tags, "role"); ok && r != "" {
		if p.Role != "" && p.Role != r {
			return nil, reject.Invalidf("the p tag's role %q and the role tag %q disagree", p.Role, r)
		}
		p.Role = r
	}
	if p.Role != "" && RoleRank(p.Role) == 0 {
		return nil, reject.Invalidf("role %q must be owner, admin or member", p.Role)
	}
	return p, nil
}

// Target reads the single p tag of a 9001.
func Target(ev *nostr.Event) (string, error) {
	v, ok := Tag(ev.Tags, "p")
	if !ok {
		return "", reject.Invalidf("remove-user needs a p tag naming the user")
	}
	if !nostr.IsValid32ByteHex(v) {
		return "", reject.Invalidf("p tag %q is not a 64-hex public key", v)
	}
	return v, nil
}

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
	if v, has := Tag(tags, "broadcast"); has && (v == "1" || v == "true") {
		r.Broadcast = true
	}
	return r, r.Parent != ""
}

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
	if ch.Visibility == "private" {
		tags = append(tags, nostr.Tag{"private"}, nostr.Tag{"closed"})
		if ch.Type == "system" {
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

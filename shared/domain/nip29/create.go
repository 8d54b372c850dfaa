package nip29

import (
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/groupid"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Channel types.
const (
	TypeStream   = "stream"
	TypeForum    = "forum"
	TypeDM       = "dm"
	TypeWorkflow = "workflow"
	TypeSystem   = "system"
)

// Visibilities.
const (
	Open    = "open"
	Private = "private"
)

// Channel types and visibilities, as lists.
var (
	Types        = []string{TypeStream, TypeForum, TypeDM, TypeWorkflow, TypeSystem}
	Visibilities = []string{Open, Private}
)

// IsType reports whether s names a channel type.
func IsType(s string) bool { return contains(Types, s) }

// Create is a parsed kind 9007.
type Create struct {
	ID, Name, About, Picture string
	Type, Visibility         string
	Labels                   []string
	Flags                    Flags
	SupportedKinds           []int
	Parent                   string
}

// ParseCreate reads a 9007. Only h is required (NIP-29: a group id, see
// ValidGroupID, outside the DM id space: IsDMID; a DM, channel_type dm, is
// never made by a 9007); name, about, picture, Buzz's channel_type, visibility and t
// labels, NIP-29's flags, supported_kinds and parent are optional. A system
// channel is private unless it asks for ["visibility","open"]; other
// channels default to open. NIP-29 flag tags, when present, set the flags
// after visibility.
func ParseCreate(ev *nostr.Event) (*Create, error) {
	c := &Create{}
	raw, ok := filter.TagValue(ev.Tags, "h")
	if !ok || raw == "" {
		return nil, reject.Invalidf("channel create needs an h tag with the group id")
	}
	if !groupid.Valid(raw) {
		return nil, reject.Invalidf("group id %q must be %s", groupid.Clip(raw), groupid.Rule)
	}
	c.ID = groupid.Canonical(raw)
	if IsDMID(c.ID) {
		return nil, reject.Invalidf("group id %s is reserved for DMs (a version-5 UUID): a DM is opened with kind %d; choose another id", c.ID, kinds.DMOpen)
	}
	if v, ok := filter.TagValue(ev.Tags, "name"); ok {
		if strings.TrimSpace(v) == "" {
			return nil, reject.Invalidf("a name tag cannot be blank")
		}
		c.Name = v
	}
	c.About, _ = filter.TagValue(ev.Tags, "about")
	c.Picture, _ = filter.TagValue(ev.Tags, "picture")
	c.Type = TypeStream
	if v, ok := filter.TagValue(ev.Tags, "channel_type"); ok {
		if !IsType(v) {
			return nil, reject.Invalidf("channel_type %q must be one of %s", v, strings.Join(Types, ", "))
		}
		if v == TypeDM {
			return nil, reject.Invalidf("a DM is opened with kind %d, not created with kind %d", kinds.DMOpen, ev.Kind)
		}
		c.Type = v
	}
	c.Visibility = Open
	if c.Type == TypeSystem {
		c.Visibility = Private
	}
	if v, ok := filter.TagValue(ev.Tags, "visibility"); ok {
		if !contains(Visibilities, v) {
			return nil, reject.Invalidf("visibility %q must be open or private", v)
		}
		c.Visibility = v
	}
	c.Flags = VisibilityFlags(c.Visibility)
	flags, present, err := ParseFlags(ev.Tags)
	if err != nil {
		return nil, err
	}
	if present {
		c.Flags = flags
		c.Visibility = flags.Visibility()
	}
	if c.SupportedKinds, _, err = ParseSupportedKinds(ev.Tags); err != nil {
		return nil, err
	}
	if c.Parent, _, err = ParseParent(ev.Tags); err != nil {
		return nil, err
	}
	labels, _, err := Labels(ev.Tags)
	if err != nil {
		return nil, err
	}
	c.Labels = labels
	return c, nil
}

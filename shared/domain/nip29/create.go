package nip29

import (
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
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
	c.Name, _ = filter.TagValue(ev.Tags, "name")
	if strings.TrimSpace(c.Name) == "" {
		return nil, reject.Invalidf("channel create needs a non-empty name tag")
	}
	c.About, _ = filter.TagValue(ev.Tags, "about")
	c.Picture, _ = filter.TagValue(ev.Tags, "picture")
	c.Type = TypeStream
	if v, ok := filter.TagValue(ev.Tags, "channel_type"); ok {
		if !IsType(v) {
			return nil, reject.Invalidf("channel_type %q must be one of %s", v, strings.Join(Types, ", "))
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
	labels, _, err := Labels(ev.Tags)
	if err != nil {
		return nil, err
	}
	c.Labels = labels
	return c, nil
}

package nip29

import (
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Edit is a parsed kind 9002; nil fields stay as they are.
type Edit struct {
	Name, About, Picture, Visibility *string
	Labels                           []string
	LabelsSet                        bool
	// Flags, when set, replace the group's NIP-29 flags: a 9002 naming any
	// flag carries them all (NIP-29); Buzz's visibility maps onto them.
	Flags *Flags
	// SupportedKinds replaces the group's when KindsSet.
	SupportedKinds []int
	KindsSet       bool
	// Parent replaces the group's parent when ParentSet ("": a root).
	Parent    string
	ParentSet bool
	// Archived, when set, archives (true) or unarchives (false) the
	// channel: Buzz's ["archived","true"|"false"].
	Archived *bool
}

// ArchivedTag is the 9002 tag that archives or unarchives a channel, and
// the 39000 tag of an archived one (Buzz's).
const ArchivedTag = "archived"

// Unarchives reports whether ev is the one write an archived channel
// takes: a 9002 with ["archived","false"].
func Unarchives(kind int, tags nostr.Tags) bool {
	v, ok := filter.TagValue(tags, ArchivedTag)
	return kind == kinds.EditMetadata && ok && v == "false"
}

// ParseEdit reads a 9002's name, about, picture, visibility, labels, NIP-29
// flags, supported_kinds, parent and Buzz's archived.
func ParseEdit(ev *nostr.Event) (*Edit, error) {
	e := &Edit{}
	if v, ok := filter.TagValue(ev.Tags, "name"); ok {
		if strings.TrimSpace(v) == "" {
			return nil, reject.Invalidf("name cannot be empty")
		}
		e.Name = &v
	}
	if v, ok := filter.TagValue(ev.Tags, "about"); ok {
		e.About = &v
	}
	if v, ok := filter.TagValue(ev.Tags, ArchivedTag); ok {
		if v != "true" && v != "false" {
			return nil, reject.Invalidf("archived %q must be true or false", v)
		}
		a := v == "true"
		e.Archived = &a
	}
	if v, ok := filter.TagValue(ev.Tags, "picture"); ok {
		e.Picture = &v
	}
	if v, ok := filter.TagValue(ev.Tags, "visibility"); ok {
		if !contains(Visibilities, v) {
			return nil, reject.Invalidf("visibility %q must be open or private", v)
		}
		e.Visibility = &v
	}
	flags, present, err := ParseFlags(ev.Tags)
	if err != nil {
		return nil, err
	}
	if present {
		if e.Visibility != nil && *e.Visibility != flags.Visibility() {
			return nil, reject.Invalidf("visibility %q and the private flag disagree", *e.Visibility)
		}
		v := flags.Visibility()
		e.Flags, e.Visibility = &flags, &v
	}
	if e.SupportedKinds, e.KindsSet, err = ParseSupportedKinds(ev.Tags); err != nil {
		return nil, err
	}
	if e.Parent, e.ParentSet, err = ParseParent(ev.Tags); err != nil {
		return nil, err
	}
	labels, present, err := Labels(ev.Tags)
	if err != nil {
		return nil, err
	}
	e.Labels, e.LabelsSet = labels, present
	return e, nil
}

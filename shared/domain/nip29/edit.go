package nip29

import (
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Edit is a parsed kind 9002; nil fields stay as they are.
type Edit struct {
	Name, About, Picture, Visibility *string
	Labels                           []string
	LabelsSet                        bool
}

// ParseEdit reads a 9002's name, about, picture, visibility and labels.
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
	if v, ok := filter.TagValue(ev.Tags, "picture"); ok {
		e.Picture = &v
	}
	if v, ok := filter.TagValue(ev.Tags, "visibility"); ok {
		if !contains(Visibilities, v) {
			return nil, reject.Invalidf("visibility %q must be open or private", v)
		}
		e.Visibility = &v
	}
	// NIP-29's bare public/private tags are honoured too.
	for _, t := range ev.Tags {
		if len(t) == 1 && (t[0] == "public" || t[0] == "private") {
			v := map[string]string{"public": Open, "private": Private}[t[0]]
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

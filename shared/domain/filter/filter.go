// Package filter is the relay's one meaning of a NIP-01 filter between the
// wire and the database: REQ, COUNT, POST /query and /count and live
// delivery all hold a Filter. shared/postgres/store compiles it to SQL; Matches is
// its Go twin, for events delivered live. The bridge extensions (top_level,
// depth_limit, cursors) are not part of it: shared/service/query plans them.
package filter

import (
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/groupid"
	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// Filter is one NIP-01 filter, normalized. A nil slice means "no
// constraint"; a non-nil empty slice matches nothing (as NIP-01 relays do
// with an empty list), and so does a tag filter with no values.
type Filter struct {
	IDs     []string // lower-case hex (Hex64)
	Authors []string // lower-case hex (Hex64)
	Kinds   []int
	// Tags maps a single-letter tag name to its values. #h is the channel
	// the event is stored in (lower case), not its h tag: reactions, edits
	// and deletions carry none but belong to their target's channel.
	Tags   map[string][]string
	Since  *int64
	Until  *int64
	Search string // NIP-50; blank is no search (Searches)
}

// Hex64 is the one hex rule of filter values (ids, authors, cursors, a
// thread root): 64 hex characters in either case, compared in lower case,
// which is how ids and keys are stored. It returns the lower-case form.
func Hex64(s string) (string, bool) {
	if len(s) != 64 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

// TagName reports whether name is a filterable tag name: one letter (the
// tags the store indexes).
func TagName(name string) bool {
	return len(name) == 1 && (name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z')
}

// Channels normalizes #h values in place to the form group ids are stored
// in (groupid.Canonical: a UUID in lower case, any other id as sent).
func Channels(vals []string) {
	for i, v := range vals {
		vals[i] = groupid.Canonical(v)
	}
}

// FromNostr is f as a Filter, for a filter already validated on the way in
// (shared/service/query checks limits and hex): ids, authors and #h in lower case,
// tag names other than one letter dropped, limit left out (it is a page
// size, not a match).
func FromNostr(f nostr.Filter) Filter {
	out := Filter{Kinds: f.Kinds, IDs: lowerAll(f.IDs), Authors: lowerAll(f.Authors), Search: f.Search}
	for name, vals := range f.Tags {
		if !TagName(name) {
			continue
		}
		if out.Tags == nil {
			out.Tags = map[string][]string{}
		}
		vals = slices.Clone(vals)
		if vals == nil {
			vals = []string{}
		}
		out.Tags[name] = vals
	}
	Channels(out.Tags["h"])
	if f.Since != nil {
		s := int64(*f.Since)
		out.Since = &s
	}
	if f.Until != nil {
		u := int64(*f.Until)
		out.Until = &u
	}
	return out
}

func lowerAll(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}

// Empty reports whether f can match nothing: an empty ids, authors or
// kinds list, or a tag filter without values.
func (f *Filter) Empty() bool {
	if f.IDs != nil && len(f.IDs) == 0 || f.Authors != nil && len(f.Authors) == 0 || f.Kinds != nil && len(f.Kinds) == 0 {
		return true
	}
	for _, vals := range f.Tags {
		if len(vals) == 0 {
			return true
		}
	}
	return false
}

// Searches reports whether f is a NIP-50 search.
func (f *Filter) Searches() bool { return Searches(f.Search) }

// Searches reports whether a NIP-50 search string asks for anything.
func Searches(s string) bool { return strings.TrimSpace(s) != "" }

// TagNames returns f's tag names in a fixed order, so the SQL text built
// from them (and its plan cache entry) does not depend on map order.
func (f *Filter) TagNames() []string {
	names := make([]string, 0, len(f.Tags))
	for n := range f.Tags {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Without returns a copy of f without the tag filter name.
func (f *Filter) Without(name string) *Filter {
	c := *f
	c.Tags = make(map[string][]string, len(f.Tags))
	for k, v := range f.Tags {
		if k != name {
			c.Tags[k] = v
		}
	}
	return &c
}

// Matches reports whether ev, stored in channel ("" outside any), matches
// f: the Go twin of the SQL shared/postgres/store compiles f to. A NIP-50 search
// needs every word of the search in the content, as Postgres's 'simple'
// configuration roughly splits it.
func (f *Filter) Matches(ev *nostr.Event, channel string) bool {
	if f.IDs != nil && !slices.Contains(f.IDs, ev.ID) ||
		f.Authors != nil && !slices.Contains(f.Authors, ev.PubKey) ||
		f.Kinds != nil && !slices.Contains(f.Kinds, ev.Kind) ||
		f.Since != nil && int64(ev.CreatedAt) < *f.Since ||
		f.Until != nil && int64(ev.CreatedAt) > *f.Until {
		return false
	}
	for name, vals := range f.Tags {
		if name == "h" {
			if channel == "" || !slices.Contains(vals, channel) || !ByChannel(ev, channel) {
				return false
			}
			continue
		}
		if !HasTag(ev.Tags, name, vals...) {
			return false
		}
	}
	if f.Searches() {
		have := Words(ev.Content)
		for _, w := range Words(f.Search) {
			if !slices.Contains(have, w) {
				return false
			}
		}
	}
	return true
}

// ByChannel reports whether #h reaches ev, stored in channel: every event
// stored there but the group's NIP-29 pin list (a 39005 whose d is the
// channel; it carries no h tag and is read by #d, kind or author), so that
// a channel's #h reads and live subscriptions (Buzz's window among them)
// see what they saw before pins. Buzz's thread summaries (39005 with d a
// thread root and an h tag) are not the pin list. Its SQL twin is
// byChannelSQL (store/readfilter.go).
func ByChannel(ev *nostr.Event, channel string) bool {
	if ev.Kind != kinds.GroupPins {
		return true
	}
	d, _ := TagValue(ev.Tags, "d")
	return d != channel
}

// HasTag reports whether tags hold a name tag whose value is one of vals:
// the one tag lookup of a filter (a tag's value is its first element after
// the name, as event_tags indexes it).
func HasTag(tags nostr.Tags, name string, vals ...string) bool {
	for _, t := range tags {
		if len(t) >= 2 && t[0] == name && slices.Contains(vals, t[1]) {
			return true
		}
	}
	return false
}

// TagValue returns the value of the first tag named name (one with a
// value), and whether there is one.
func TagValue(tags nostr.Tags, name string) (string, bool) {
	for _, t := range tags {
		if len(t) >= 2 && t[0] == name {
			return t[1], true
		}
	}
	return "", false
}

// TagValues returns the values of tags named name, in order.
func TagValues(tags nostr.Tags, name string) []string {
	var out []string
	for _, t := range tags {
		if len(t) >= 2 && t[0] == name {
			out = append(out, t[1])
		}
	}
	return out
}

// Words splits s into lowercase words, as Postgres's 'simple' text search
// configuration roughly does.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

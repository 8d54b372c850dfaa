package fanout

import (
	"slices"
	"strings"
	"unicode"

	"github.com/nbd-wtf/go-nostr"
)

// liveFilter is one stored REQ filter prepared for matching: #h is taken
// out because it matches the event's stored channel, not its h tag.
type liveFilter struct {
	f     nostr.Filter // without #h
	h     []string     // #h values; nil when the filter has no #h
	named []string     // channels this filter names (NIP-CL)
	words []string     // NIP-50 search words, lowercased
}

func newLiveFilter(f nostr.Filter) liveFilter {
	lf := liveFilter{named: NamedChannels(f)}
	if h, ok := f.Tags["h"]; ok {
		lf.h = h
		if lf.h == nil {
			lf.h = []string{}
		}
		tags := make(nostr.TagMap, len(f.Tags)-1)
		for k, v := range f.Tags {
			if k != "h" {
				tags[k] = v
			}
		}
		f.Tags = tags
	}
	if f.Search != "" {
		lf.words = words(f.Search)
	}
	lf.f = f
	return lf
}

// matches reports whether ev, stored in channel, matches the filter. limit
// does not apply to live events.
func (lf *liveFilter) matches(ev *nostr.Event, channel string) bool {
	if lf.h != nil && (channel == "" || !slices.Contains(lf.h, channel)) {
		return false
	}
	if !lf.f.Matches(ev) {
		return false
	}
	if len(lf.words) > 0 {
		have := words(ev.Content)
		for _, w := range lf.words {
			if !slices.Contains(have, w) {
				return false
			}
		}
	}
	return true
}

func (lf *liveFilter) names(channel string) bool { return slices.Contains(lf.named, channel) }

// words splits s into lowercase words, as Postgres's 'simple' text search
// configuration roughly does.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// NamedChannels are the channels a filter names: its #h values, or its #d
// values when all its kinds are channel-state kinds (39000-39003). Only a
// filter that names a system channel reads it (NIP-CL).
func NamedChannels(f nostr.Filter) []string {
	named := slices.Clone(f.Tags["h"])
	if len(f.Kinds) > 0 && stateKindsOnly(f.Kinds) {
		named = append(named, f.Tags["d"]...)
	}
	return named
}

func stateKindsOnly(kinds []int) bool {
	for _, k := range kinds {
		if k < 39000 || k > 39003 {
			return false
		}
	}
	return true
}

// Pins are the fan-out index keys of a subscription: the channels its
// filters pin, and "" when a filter pins none (the any-channel bucket). A
// filter with an empty #h matches nothing and pins nothing.
func Pins(filters []nostr.Filter) []string {
	set := map[string]bool{}
	for _, f := range filters {
		if h, ok := f.Tags["h"]; ok {
			for _, c := range h {
				set[c] = true
			}
			continue
		}
		if d, ok := f.Tags["d"]; ok && len(f.Kinds) > 0 && stateKindsOnly(f.Kinds) {
			for _, c := range d {
				set[c] = true
			}
			continue
		}
		set[""] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

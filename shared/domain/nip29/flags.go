package nip29

import (
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/groupid"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// NIP-29's group flags, as valueless tags of a 39000, 9007 or 9002.
const (
	FlagPrivate    = "private"    // only members read the group's messages
	FlagRestricted = "restricted" // only members write to the group
	FlagHidden     = "hidden"     // only members read the group's metadata (39000-39003)
	FlagClosed     = "closed"     // join requests need an invite code
	// FlagPublic and FlagOpen are the older negations of private and closed,
	// which this relay also publishes (Buzz clients read them).
	FlagPublic = "public"
	FlagOpen   = "open"
)

// flagTags are the tag names ParseFlags reads.
var flagTags = []string{FlagPrivate, FlagRestricted, FlagHidden, FlagClosed, FlagPublic, FlagOpen}

// Flags are a group's NIP-29 access flags.
type Flags struct {
	Private, Restricted, Hidden, Closed bool
}

// VisibilityFlags maps Buzz's visibility onto NIP-29's flags: "private" is
// private, restricted, closed and hidden, "open" none of them. Buzz scopes
// every read of a private channel, its metadata (39000-39003) included, to
// its members (buzz-relay's req.rs: apply_channel_scope_to_query), so a Buzz
// client's private channel is hidden too: a non-member finds nothing of it,
// as on Buzz's own relay (NIP-CL's private system channel, whose 39000
// carries hidden, is one of them). A group created or edited with NIP-29's
// own flag tags keeps the flags it names (ParseFlags): private without
// hidden leaves its metadata readable, as NIP-29 says.
func VisibilityFlags(visibility string) Flags {
	if visibility != Private {
		return Flags{}
	}
	return Flags{Private: true, Restricted: true, Closed: true, Hidden: true}
}

// Visibility is Buzz's visibility of a group with flags f: private when
// only members read its messages.
func (f Flags) Visibility() string {
	if f.Private {
		return Private
	}
	return Open
}

// ParseFlags reads NIP-29's flag tags. present is false when the event names
// no flag at all; otherwise the flags it names are set and the others unset
// (a 9002 carries the whole metadata, NIP-29), public and open naming a flag
// unset unless the flag itself is named too. A flag tag with a value is
// refused.
func ParseFlags(tags nostr.Tags) (f Flags, present bool, err error) {
	for _, t := range tags {
		if len(t) == 0 || !contains(flagTags, t[0]) {
			continue
		}
		if len(t) > 1 {
			return Flags{}, false, reject.Invalidf("the %s flag takes no value: send [%q]", t[0], t[0])
		}
		present = true
		switch t[0] {
		case FlagPrivate:
			f.Private = true
		case FlagRestricted:
			f.Restricted = true
		case FlagHidden:
			f.Hidden = true
		case FlagClosed:
			f.Closed = true
		}
	}
	// public and open only name the flags: beside private or closed (a
	// client echoing an older 39000, as welshman's edit does) the flag wins.
	return f, present, nil
}

// ParseSupportedKinds reads a supported_kinds tag: the kinds a group
// accepts (NIP-29). present is false without the tag; an empty tag supports
// no kind. A value that is not a kind number is refused.
func ParseSupportedKinds(tags nostr.Tags) (ks []int, present bool, err error) {
	for _, t := range tags {
		if len(t) == 0 || t[0] != "supported_kinds" {
			continue
		}
		if present {
			return nil, false, reject.Invalidf("a group has one supported_kinds tag")
		}
		present = true
		ks = []int{}
		for _, v := range t[1:] {
			k, err := strconv.Atoi(v)
			if err != nil || k < 0 || k > 65535 || strconv.Itoa(k) != v {
				return nil, false, reject.Invalidf("supported_kinds value %q is not a kind number", v)
			}
			ks = append(ks, k)
		}
	}
	return ks, present, nil
}

// ParseParent reads a parent tag (NIP-29 subgroups). present is false
// without one; ["parent"] or ["parent", ""] makes a root (present, "").
func ParseParent(tags nostr.Tags) (parent string, present bool, err error) {
	for _, t := range tags {
		if len(t) == 0 || t[0] != "parent" {
			continue
		}
		if present {
			return "", false, reject.Invalidf("a group has at most one parent tag")
		}
		present = true
		if len(t) >= 2 && t[1] != "" {
			if !groupid.Valid(t[1]) {
				return "", false, reject.Invalidf("parent %q is not a group id (%s)", t[1], groupid.Rule)
			}
			parent = groupid.Canonical(t[1])
		}
	}
	return parent, present, nil
}

// MaxGroupDepth bounds a chain of subgroups (parent of parent ...).
const MaxGroupDepth = 16

// MaxInviteCodeLength bounds a 9009 invite code.
const MaxInviteCodeLength = 128

// Supports reports whether a group with supported kinds ks (nil: every
// kind) takes kind. It applies to every event filed in the group that is
// content there (Content).
func Supports(ks []int, kind int) bool {
	if ks == nil {
		return true
	}
	for _, k := range ks {
		if k == kind {
			return true
		}
	}
	return false
}

// Content reports whether an event of kind, filed in a group by a key that
// is an owner or admin there (admin) or not, is content that the group's
// supported_kinds governs: every kind but NIP-29's moderation and membership
// kinds (9000-9030: the group's management, joining and leaving), and of
// those a 9005 from a key that is no admin, an author deleting their own
// event as a kind 5 does.
func Content(kind int, admin bool) bool {
	if kind == kinds.DeleteEvent {
		return !admin
	}
	return !kinds.Moderation(kind)
}

// WithoutTypeEcho drops the t tags whose value is the group's own type
// from a 9002's tags when the 9002 sends back the group's 39000 (welshman's
// makeRoomEditEvent does): it then echoes the NIP-CL identity tags, ["t",
// <type>] beside ["P", <creator>], and the type tag is no label. A 9002
// without that P keeps every t tag, so a type name as a label is refused
// (Labels) for every type alike.
func WithoutTypeEcho(tags nostr.Tags, ch *Channel) nostr.Tags {
	echo := false
	for _, t := range tags {
		if len(t) >= 2 && t[0] == "P" && t[1] == ch.Creator {
			echo = true
		}
	}
	if !echo {
		return tags
	}
	out := make(nostr.Tags, 0, len(tags))
	for _, t := range tags {
		if len(t) >= 2 && t[0] == "t" && t[1] == ch.Type {
			continue
		}
		out = append(out, t)
	}
	return out
}

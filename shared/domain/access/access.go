// Package access is the relay's one rule of who may read and write what:
// a channel (open, private, deleted, system), a recipient-only notice, and
// which channels a filter names (NIP-CL: a system channel is read only by a
// filter that names it). It is pure Go; shared/postgres/store holds its one SQL twin
// (store/access.go), and testdata/cases.json runs against both.
package access

import (
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip40"
)

// Channel is what the rule needs about a channel. The zero value is a
// channel that does not exist.
type Channel struct {
	Exists  bool
	Deleted bool
	Open    bool // visibility open; private otherwise
	System  bool // channel_type system
	// NIP-29's restricted (only members write) and hidden (only members
	// read the group's metadata, 39000-39003) flags; Open is !private.
	Restricted bool
	Hidden     bool
}

// Member is a key's standing in a channel.
type Member int

const (
	Never   Member = iota // never a member
	Active                // a member now
	Removed               // was a member, removed
)

// Reaches reports whether a key may use channel at all: it exists, is not
// deleted, and is open or has the key as an active member. A channel that
// does not exist and a private one the key is not in look the same.
func Reaches(c Channel, m Member) bool {
	return c.Exists && !c.Deleted && (c.Open || m == Active)
}

// Shows reports whether a filter sees a channel: a system channel only when
// the filter names it (NIP-CL); any other channel always.
func Shows(system, named bool) bool { return !system || named }

// MayRead reports whether a key with standing m may read channel c through
// a filter that names it (named) or not.
func MayRead(c Channel, m Member, named bool) bool { return Reaches(c, m) && Shows(c.System, named) }

// MayWrite reports whether a key with standing m may post to channel c: a
// member, or anyone to a group neither private nor restricted.
func MayWrite(c Channel, m Member) bool {
	return Reaches(c, m) && (m == Active || !c.Restricted)
}

// MetadataReaches reports whether a key may read channel c's metadata
// (the channel-state kinds, 39000-39003): it exists, is not deleted, and is
// not hidden or has the key as an active member (NIP-29: only hidden hides
// metadata; private hides messages).
func MetadataReaches(c Channel, m Member) bool {
	return c.Exists && !c.Deleted && (!c.Hidden || m == Active)
}

// MayReadKind is MayRead for events of kind in c: the channel-state kinds
// follow MetadataReaches, every other kind Reaches.
func MayReadKind(c Channel, m Member, named bool, kind int) bool {
	if kinds.ChannelState(kind) {
		return MetadataReaches(c, m) && Shows(c.System, named)
	}
	return MayRead(c, m, named)
}

// MaySee is the rule for one stored event and a reader: a recipient-only
// kind (kinds.RecipientOnly: membership notices, gift wraps, Buzz's #p-gated
// kinds) only for a reader its p tags name, whatever its channel; an
// author-only kind (kinds.AuthorOnly) only for its author; a shared-gated
// kind (kinds.SharedGated) for its author, or for anyone when it is shared
// (kinds.Shared); then an event outside any channel for anyone, one in a
// channel when channelReadable (MayRead of its channel for the filter at
// hand).
func MaySee(ev *nostr.Event, reader string, inChannel, channelReadable bool) bool {
	switch {
	case kinds.RecipientOnly(ev.Kind):
		return Recipient(ev, reader)
	case kinds.AuthorOnly(ev.Kind):
		return ev.PubKey == reader
	case kinds.SharedGated(ev.Kind) && ev.PubKey != reader && !Shared(ev):
		return false
	}
	return !inChannel || channelReadable
}

// Unexpired is NIP-40 on every read path and live delivery: an event past
// its expiration (nip40.Expired at now, unix seconds) is served to no
// reader, before and after the sweep deletes it. Its SQL twin leads every
// path's predicate (store/access.go, unexpiredSQL).
func Unexpired(ev *nostr.Event, now int64) bool { return !nip40.Expired(ev.Tags, now) }

// Shared reports whether ev carries exactly one ["shared","true"] tag
// (kinds.Shared), which opens a shared-gated kind to every reader.
func Shared(ev *nostr.Event) bool {
	tags := make([][]string, len(ev.Tags))
	for i, t := range ev.Tags {
		tags[i] = t
	}
	return kinds.Shared(tags)
}

// Recipient reports whether reader is one of ev's p tags.
func Recipient(ev *nostr.Event, reader string) bool { return filter.HasTag(ev.Tags, "p", reader) }

// Named are the channels a filter names: its #h values, or also its #d
// values when all its kinds are channel-state kinds (StateOnly). Only a
// filter that names a system channel reads it.
func Named(f *filter.Filter) []string {
	named := slices.Clone(f.Tags["h"])
	if StateOnly(f.Kinds) {
		named = append(named, f.Tags["d"]...)
	}
	return named
}

// StateOnly reports whether ks is a non-empty list of channel-state kinds
// (kinds.ChannelState: 39000-39003), whose #d names the channel.
func StateOnly(ks []int) bool {
	if len(ks) == 0 {
		return false
	}
	for _, k := range ks {
		if !kinds.ChannelState(k) {
			return false
		}
	}
	return true
}

// Names reports whether f names channel (NIP-CL).
func Names(f *filter.Filter, channel string) bool { return slices.Contains(Named(f), channel) }

// OthersReminders reports whether f asks only for NIP-ER reminders (kind
// 30300, author-only) and only for keys other than reader's: NIP-ER has a
// relay close such a request with restricted: rather than answer it empty.
// The verdict depends on the filter and the reader alone, never on what is
// stored, so it tells nothing about whether any reminder exists. A filter
// with other kinds, or naming the reader too, is served with the others'
// reminders left out (MaySee).
func OthersReminders(f *filter.Filter, reader string) bool {
	if len(f.Kinds) == 0 || len(f.Authors) == 0 {
		return false
	}
	for _, k := range f.Kinds {
		if k != kinds.EventReminder {
			return false
		}
	}
	return !slices.Contains(f.Authors, reader)
}

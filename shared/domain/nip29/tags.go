package nip29

import (
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/groupid"
	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ChannelTag returns the group id of the first h tag in its canonical form
// (groupid.Canonical).
func ChannelTag(tags nostr.Tags) (string, bool) {
	v, ok := filter.TagValue(tags, "h")
	return groupid.Canonical(v), ok
}

// Targets is the event ids an event aims at through its e tags: a
// reaction's (7) or forum vote's (45002) last e tag (NIP-25), an edit's (40003) first, every e tag
// of anything else (the deletions 5 and 9005). An e tag that is not the
// target (a quoted message, say) is not one. The write path checks the
// target it names; the read path's aux closure follows the same tags.
func Targets(kind int, tags nostr.Tags) []string {
	es := filter.TagValues(tags, "e")
	if len(es) == 0 {
		return nil
	}
	switch kind {
	case kinds.Reaction, kinds.ForumVote: // a forum vote aims like a reaction
		return es[len(es)-1:]
	case kinds.Edit:
		return es[:1]
	}
	return es
}

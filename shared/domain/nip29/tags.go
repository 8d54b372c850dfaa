package nip29

import (
	"strings"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/nbd-wtf/go-nostr"
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

// ChannelTag returns the channel id of the first h tag, lowercased: channel
// ids are UUIDs, compared case-insensitively and stored in lower case.
func ChannelTag(tags nostr.Tags) (string, bool) {
	v, ok := filter.TagValue(tags, "h")
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

// Targets is the event ids an event aims at through its e tags: a
// reaction's (7) last e tag (NIP-25), an edit's (40003) first, every e tag
// of anything else (the deletions 5 and 9005). An e tag that is not the
// target (a quoted message, say) is not one. The write path checks the
// target it names; the read path's aux closure follows the same tags.
func Targets(kind int, tags nostr.Tags) []string {
	es := filter.TagValues(tags, "e")
	if len(es) == 0 {
		return nil
	}
	switch kind {
	case kinds.Reaction:
		return es[len(es)-1:]
	case kinds.Edit:
		return es[:1]
	}
	return es
}

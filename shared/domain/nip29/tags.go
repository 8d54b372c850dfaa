package nip29

import (
	"strings"

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
	v, ok := Tag(tags, "h")
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

// Tag returns the value of the first tag named name, and whether there is one.
func Tag(tags nostr.Tags, name string) (string, bool) {
	for _, t := range tags {
		if len(t) >= 2 && t[0] == name {
			return t[1], true
		}
	}
	return "", false
}

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

// MaxGroupIDLength bounds a group id: NIP-29 allows any random string, this
// relay takes 1 to 64 characters from a-z, A-Z, 0-9, - and _ (a UUID is 36).
const MaxGroupIDLength = 64

// ValidGroupID reports whether s is a group id this relay takes: 1 to
// MaxGroupIDLength characters from a-z, A-Z, 0-9, - and _.
func ValidGroupID(s string) bool {
	if len(s) == 0 || len(s) > MaxGroupIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// CanonicalGroupID is the form a group id is stored, signed and compared in:
// a UUID in any case becomes lower case (Buzz's channel ids compare
// case-insensitively); any other id is kept exactly as sent.
func CanonicalGroupID(s string) string {
	if isUUID(s) {
		return strings.ToLower(s)
	}
	return s
}

// ChannelTag returns the group id of the first h tag in its canonical form
// (CanonicalGroupID).
func ChannelTag(tags nostr.Tags) (string, bool) {
	v, ok := Tag(tags, "h")
	return CanonicalGroupID(v), ok
}

// isUUID reports whether s is a hyphenated UUID in either case.
func isUUID(s string) bool {
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
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
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

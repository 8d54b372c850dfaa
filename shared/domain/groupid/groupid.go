// Package groupid is the one rule for NIP-29 group ids (channel ids): which
// strings this relay takes as a group id and the canonical form it stores,
// signs and compares them in. It sits below filter, eventcheck and nip29,
// which all read h tags.
package groupid

import "strings"

// MaxLength bounds a group id: NIP-29 allows any random string, this relay
// takes 1 to 64 characters from a-z, A-Z, 0-9, - and _ (a UUID is 36).
const MaxLength = 64

// Rule says what a group id may be, for refusals.
const Rule = "1 to 64 characters from a-z, A-Z, 0-9, - and _"

// Valid reports whether s is a group id this relay takes: 1 to MaxLength
// characters from a-z, A-Z, 0-9, - and _.
func Valid(s string) bool {
	if len(s) == 0 || len(s) > MaxLength {
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

// Canonical is the form a group id is stored, signed and compared in: a
// UUID in any case becomes lower case (Buzz's channel ids compare
// case-insensitively); any other id is kept exactly as sent.
func Canonical(s string) string {
	if isUUID(s) {
		return strings.ToLower(s)
	}
	return s
}

// Clip cuts a client's value to 80 bytes for a refusal.
func Clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
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

package nip29

import (
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Label rules of NIP-CL: at most MaxLabels distinct labels, each 1 to
// MaxLabelLength characters of a-z, 0-9, '.', ':' and '-', and not a channel
// type name.
const (
	MaxLabels      = 8
	MaxLabelLength = 64
)

// ValidLabel reports whether l is 1 to MaxLabelLength characters of a-z 0-9
// . : - and not a channel type name.
func ValidLabel(l string) bool {
	if len(l) < 1 || len(l) > MaxLabelLength || IsType(l) {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// Labels reads the t tags of a 9007 (create) or 9002 (edit). present is false when the event
// has no t tag at all (9002: leave labels as they are). A set of only
// ["t",""] tags clears (present, empty). The whole event is rejected for an
// invalid or reserved label, more than MaxLabels distinct labels, or ""
// mixed with labels, and for a valueless ["t"] (neither a label nor the
// clearing ["t",""]). Repeats are stored once, first occurrence first.
func Labels(tags nostr.Tags) (labels []string, present bool, err error) {
	clear := false
	seen := map[string]bool{}
	for _, t := range tags {
		if len(t) < 1 || t[0] != "t" {
			continue
		}
		present = true
		if len(t) < 2 {
			return nil, true, reject.Invalidf(`a t tag needs a value: ["t", <label>], or ["t", ""] to clear`)
		}
		if t[1] == "" {
			clear = true
			continue
		}
		l := t[1]
		if IsType(l) {
			return nil, true, reject.Invalidf("label %q is a channel type name and is reserved", l)
		}
		if !ValidLabel(l) {
			return nil, true, reject.Invalidf("label %q must be 1-%d characters of a-z, 0-9, '.', ':' and '-'", l, MaxLabelLength)
		}
		if !seen[l] {
			seen[l] = true
			labels = append(labels, l)
		}
	}
	if clear && len(labels) > 0 {
		return nil, true, reject.Invalidf(`["t",""] clears the labels and cannot be combined with other labels`)
	}
	if len(labels) > MaxLabels {
		return nil, true, reject.Invalidf("%d distinct labels, the limit is %d", len(labels), MaxLabels)
	}
	if labels == nil {
		labels = []string{}
	}
	return labels, present, nil
}

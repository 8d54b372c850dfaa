package nip29_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
)

// Issue 36: every DM's id lies in the DM id space, and nothing else a
// client makes does (a random UUID is version 4).
func TestIsDMID(t *testing.T) {
	a, b, c := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	for _, set := range [][]string{{a, b}, {a, c}, {a, b, c}} {
		if id := nip29.DMChannelID(set); !nip29.IsDMID(id) {
			t.Fatalf("the DM id %s is not in the DM id space", id)
		}
	}
	dm := nip29.DMChannelID([]string{a, b})
	for name, id := range map[string]string{
		"random UUID (v4)":   "9b353519-f4fe-4757-aef4-bec6cc0ae54c",
		"upper case":         strings.ToUpper(dm),
		"other variant":      dm[:19] + "c" + dm[20:],
		"version 4":          dm[:14] + "4" + dm[15:],
		"no hyphens":         strings.ReplaceAll(dm, "-", ""),
		"NIP-29 id":          "pizza-lovers",
		"36 chars, not UUID": strings.Repeat("5", 36),
		"empty":              "",
	} {
		if nip29.IsDMID(id) {
			t.Errorf("%s %q is taken for a DM id", name, id)
		}
	}
}

// Issue 36: no 9007 makes a DM, at a DM's id or by channel_type.
func TestParseCreateRefusesDMs(t *testing.T) {
	dm := nip29.DMChannelID([]string{strings.Repeat("a", 64), strings.Repeat("b", 64)})
	for name, c := range map[string]struct {
		tags nostr.Tags
		err  string
	}{
		"DM id":            {tags([]string{"h", dm}), "invalid: group id " + dm + " is reserved for DMs"},
		"DM id upper case": {tags([]string{"h", strings.ToUpper(dm)}), "invalid: group id " + dm + " is reserved for DMs"},
		"DM id as stream":  {tags([]string{"h", dm}, []string{"channel_type", "stream"}), "invalid: group id " + dm + " is reserved for DMs"},
		"channel_type dm":  {tags([]string{"h", "pizza"}, []string{"channel_type", "dm"}), "invalid: a DM is opened with kind 41010"},
	} {
		_, err := nip29.ParseCreate(&nostr.Event{Kind: 9007, Tags: c.tags})
		if err == nil || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%s: want %q, got %v", name, c.err, err)
		}
	}
}

// Issue 36: which kinds filed in a group are content that supported_kinds
// govern, and which act on a DM through NIP-29's moderation path.
func TestContentAndActsOnDM(t *testing.T) {
	for _, c := range []struct {
		kind           int
		admin, content bool
	}{
		{9, false, true}, {7, false, true}, {5, false, true}, {40003, true, true}, {45002, false, true},
		{20001, false, true}, {30023, true, true},
		{9005, false, true}, {9005, true, false},
		{9000, true, false}, {9002, true, false}, {9008, true, false}, {9009, true, false},
		{9000, false, false}, {9021, false, false}, {9022, false, false},
	} {
		if got := nip29.Content(c.kind, c.admin); got != c.content {
			t.Errorf("Content(%d, admin %v) = %v", c.kind, c.admin, got)
		}
	}
	for kind, acts := range map[int]bool{9005: true, 9022: true, 41011: true, 41012: true,
		9000: false, 9001: false, 9002: false, 9007: false, 9008: false, 9009: false, 9021: false} {
		if nip29.ActsOnDM(kind) != acts {
			t.Errorf("ActsOnDM(%d) = %v", kind, !acts)
		}
	}
}

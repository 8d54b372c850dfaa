package nip29_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
)

// TestParsePins is the 9010 rule: the group's h, then the ordered e/a tags,
// each checked, at most nip29.MaxPins; anything else refused with invalid:.
func TestParsePins(t *testing.T) {
	id1, id2 := strings.Repeat("a", 64), strings.Repeat("b", 64)
	pk := strings.Repeat("c", 64)
	addr := "30023:" + pk + ":my-article"
	many := func(n int) nostr.Tags {
		out := nostr.Tags{{"h", "g"}}
		for i := 0; i < n; i++ {
			out = append(out, nostr.Tag{"e", strings.Repeat("0", 60) + string("0123456789abcdef"[i/16%16]) + "0" + string("0123456789abcdef"[i%16]) + "0"})
		}
		return out
	}
	cases := []struct {
		name  string
		tags  nostr.Tags
		group string
		pins  nostr.Tags
		err   string
	}{
		{"order kept, e and a", nostr.Tags{{"h", "g"}, {"e", id2}, {"a", addr}, {"e", id1}}, "g", nostr.Tags{{"e", id2}, {"a", addr}, {"e", id1}}, ""},
		{"empty list unpins all", nostr.Tags{{"h", "g"}}, "g", nil, ""},
		{"e upper-case hex is lower-cased", nostr.Tags{{"h", "g"}, {"e", strings.ToUpper(id1)}}, "g", nostr.Tags{{"e", id1}}, ""},
		{"relay hint and marker dropped", nostr.Tags{{"h", "g"}, {"e", id1, "wss://x", "root"}}, "g", nostr.Tags{{"e", id1}}, ""},
		{"other tags are not pins", nostr.Tags{{"h", "g"}, {"previous", "abcd1234"}, {"p", pk}, {"e", id1}}, "g", nostr.Tags{{"e", id1}}, ""},
		{"UUID group canonical", nostr.Tags{{"h", "0A0B0C0D-0000-4000-8000-000000000000"}}, "0a0b0c0d-0000-4000-8000-000000000000", nil, ""},
		{"fifty pins", many(50), "g", many(50)[1:], ""},
		{"no h", nostr.Tags{{"e", id1}}, "", nil, "invalid: kind 9010 needs an h tag"},
		{"empty h", nostr.Tags{{"h", ""}, {"e", id1}}, "", nil, "invalid: kind 9010 needs an h tag"},
		{"non-hex e", nostr.Tags{{"h", "g"}, {"e", strings.Repeat("z", 64)}}, "", nil, "invalid: pinned e"},
		{"short e", nostr.Tags{{"h", "g"}, {"e", "abcd"}}, "", nil, "invalid: pinned e"},
		{"valueless e", nostr.Tags{{"h", "g"}, {"e"}}, "", nil, "invalid: pin tag"},
		{"a without d part", nostr.Tags{{"h", "g"}, {"a", "30023:" + pk}}, "", nil, "invalid: pinned a"},
		{"a of a regular kind", nostr.Tags{{"h", "g"}, {"a", "1:" + pk + ":x"}}, "", nil, "invalid: pinned a"},
		{"a with upper-case pubkey", nostr.Tags{{"h", "g"}, {"a", "30023:" + strings.ToUpper(pk) + ":x"}}, "", nil, "invalid: pinned a"},
		{"same event twice", nostr.Tags{{"h", "g"}, {"e", id1}, {"e", strings.ToUpper(id1)}}, "", nil, "invalid: e " + id1 + " is pinned twice"},
		{"fifty-one pins", many(51), "", nil, "invalid: at most 50 pins"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := &nostr.Event{Kind: 9010, Tags: c.tags}
			group, pins, err := nip29.ParsePins(ev)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("want error %q, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if group != c.group || !reflect.DeepEqual(pins, c.pins) {
				t.Fatalf("got %q %v, want %q %v", group, pins, c.group, c.pins)
			}
			if got := nip29.PinsTags(group, pins); !reflect.DeepEqual(got, append(nostr.Tags{{"d", group}}, c.pins...)) {
				t.Fatalf("39005 tags %v", got)
			}
		})
	}
}

package fanout

import (
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

func TestPins(t *testing.T) {
	got := Pins([]nostr.Filter{
		{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"c1", "c2"}}},
		{Kinds: []int{39000}, Tags: nostr.TagMap{"d": {"c3"}}},
		{Kinds: []int{39000, 1}, Tags: nostr.TagMap{"d": {"x"}}}, // not state kinds only: bucket
		{Tags: nostr.TagMap{"h": {}}},                            // matches nothing: no pin
	})
	if want := []string{"", "c1", "c2", "c3"}; !slices.Equal(got, want) {
		t.Fatalf("Pins = %q, want %q", got, want)
	}
	if got := Pins([]nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"c"}}}}); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("a pinned filter is in the bucket: %q", got)
	}
}

func TestLiveFilterMatchesChannelNotTag(t *testing.T) {
	reaction := &nostr.Event{Kind: 7, Tags: nostr.Tags{{"e", "target"}}, CreatedAt: 10}
	f := newLiveFilter(nostr.Filter{Kinds: []int{7, 9}, Tags: nostr.TagMap{"h": {"c"}}})
	if !f.matches(reaction, "c") {
		t.Fatal("a reaction stored in channel c must match #h:[c] without an h tag")
	}
	if f.matches(reaction, "other") || f.matches(reaction, "") {
		t.Fatal("#h must match the stored channel only")
	}
	since := nostr.Timestamp(20)
	sf := newLiveFilter(nostr.Filter{Since: &since})
	if sf.matches(reaction, "c") {
		t.Fatal("since must apply to live events")
	}
	s := newLiveFilter(nostr.Filter{Search: "Hello World"})
	if !s.matches(&nostr.Event{Content: "world, hello!"}, "") || s.matches(&nostr.Event{Content: "hello"}, "") {
		t.Fatal("search must need every word")
	}
	named := newLiveFilter(nostr.Filter{Kinds: []int{39000}, Tags: nostr.TagMap{"d": {"sys"}}})
	plain := newLiveFilter(nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"d": {"sys"}}})
	if !named.names("sys") || plain.names("sys") {
		t.Fatal("#d names a channel only on channel-state kinds")
	}
}

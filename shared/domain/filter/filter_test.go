package filter

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

func TestHex64(t *testing.T) {
	lower := strings.Repeat("ab", 32)
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{lower, lower, true},
		{strings.ToUpper(lower), lower, true},
		{"Ab" + lower[2:], lower, true},
		{lower[:63], "", false},
		{lower + "a", "", false},
		{"g" + lower[1:], "", false},
		{"", "", false},
	} {
		got, ok := Hex64(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Hex64(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestFromNostrNormalizes(t *testing.T) {
	var nf nostr.Filter
	id := strings.Repeat("AB", 32)
	if err := json.Unmarshal([]byte(`{"ids":["`+id+`"],"authors":["`+id+`"],"#h":["9B353519-F4FE-4757-AEF4-BEC6CC0AE54C","ABC-D"],"#e":["X"],"#hh":["y"],"#p":[],"limit":5}`), &nf); err != nil {
		t.Fatal(err)
	}
	f := FromNostr(nf)
	low := strings.ToLower(id)
	if f.IDs[0] != low || f.Authors[0] != low {
		t.Fatalf("ids/authors not lower-cased: %q %q", f.IDs, f.Authors)
	}
	// Issue 28: a UUID #h is lower-cased, any other group id kept as sent.
	if f.Tags["h"][0] != "9b353519-f4fe-4757-aef4-bec6cc0ae54c" || f.Tags["h"][1] != "ABC-D" || f.Tags["e"][0] != "X" {
		t.Fatalf("a UUID #h must be lower-cased, other ids and tags kept: %q", f.Tags)
	}
	if _, ok := f.Tags["hh"]; ok {
		t.Fatal("a tag name of two letters is not filterable")
	}
	if p, ok := f.Tags["p"]; !ok || p == nil || !f.Empty() {
		t.Fatal("an empty #p must stay present and match nothing")
	}
}

func TestMatches(t *testing.T) {
	pk := strings.Repeat("a", 64)
	ev := &nostr.Event{ID: strings.Repeat("b", 64), PubKey: pk, Kind: 7, CreatedAt: 100, Content: "Deploy went fine, Friday!",
		Tags: nostr.Tags{{"e", "target"}, {"p", pk}}}
	at := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		name    string
		f       Filter
		channel string
		want    bool
	}{
		{"empty filter", Filter{}, "", true},
		{"kind", Filter{Kinds: []int{7}}, "", true},
		{"other kind", Filter{Kinds: []int{9}}, "", false},
		{"empty kinds", Filter{Kinds: []int{}}, "", false},
		{"author", Filter{Authors: []string{pk}}, "", true},
		{"id", Filter{IDs: []string{ev.ID}}, "", true},
		{"empty ids", Filter{IDs: []string{}}, "", false},
		{"since", Filter{Since: at(100)}, "", true},
		{"since later", Filter{Since: at(101)}, "", false},
		{"until", Filter{Until: at(100)}, "", true},
		{"until earlier", Filter{Until: at(99)}, "", false},
		{"#e", Filter{Tags: map[string][]string{"e": {"x", "target"}}}, "", true},
		{"#e other", Filter{Tags: map[string][]string{"e": {"x"}}}, "", false},
		{"#h is the stored channel", Filter{Tags: map[string][]string{"h": {"c"}}}, "c", true},
		{"#h of another channel", Filter{Tags: map[string][]string{"h": {"c"}}}, "d", false},
		{"#h outside any channel", Filter{Tags: map[string][]string{"h": {"c"}}}, "", false},
		{"empty #h", Filter{Tags: map[string][]string{"h": {}}}, "c", false},
		{"search every word", Filter{Search: "friday DEPLOY"}, "", true},
		{"search a missing word", Filter{Search: "deploy monday"}, "", false},
		{"blank search", Filter{Search: "  "}, "", true},
	} {
		if got := c.f.Matches(ev, c.channel); got != c.want {
			t.Errorf("%s: Matches = %v, want %v", c.name, got, c.want)
		}
		if c.f.Empty() && c.want {
			t.Errorf("%s: Empty but matches", c.name)
		}
	}
}

// TestHKeepsGroupPinsOut protects Buzz's #h reads and live subscriptions
// from NIP-29's pin list (39005, d = the group), which #d, kind and author
// still find; Buzz's thread summary (39005, d = a root) stays an #h event.
func TestHKeepsGroupPinsOut(t *testing.T) {
	root := strings.Repeat("d", 64)
	pins := &nostr.Event{Kind: 39005, Tags: nostr.Tags{{"d", "g"}, {"e", root}}}
	summary := &nostr.Event{Kind: 39005, Tags: nostr.Tags{{"e", root}, {"d", root}, {"h", "g"}}}
	chat := &nostr.Event{Kind: 9, Tags: nostr.Tags{{"h", "g"}}}
	byH := Filter{Tags: map[string][]string{"h": {"g"}}}
	for _, c := range []struct {
		name string
		f    Filter
		ev   *nostr.Event
		want bool
	}{
		{"#h: not the pins", byH, pins, false},
		{"#h and kind 39005: not the pins", Filter{Kinds: []int{39005}, Tags: byH.Tags}, pins, false},
		{"#h: a thread summary", byH, summary, true},
		{"#h: a message", byH, chat, true},
		{"#d group: the pins", Filter{Kinds: []int{39005}, Tags: map[string][]string{"d": {"g"}}}, pins, true},
		{"kind: the pins", Filter{Kinds: []int{39005}}, pins, true},
	} {
		if got := c.f.Matches(c.ev, "g"); got != c.want {
			t.Errorf("%s: Matches = %v, want %v", c.name, got, c.want)
		}
		if got := ByChannel(c.ev, "g"); c.ev == pins && got {
			t.Errorf("%s: ByChannel of the pins", c.name)
		}
	}
}

package nip29_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
)

func TestParseReply(t *testing.T) {
	p, r := strings.Repeat("1", 64), strings.Repeat("2", 64)
	cases := []struct {
		name string
		tags nostr.Tags
		ok   bool
		want nip29.Reply
	}{
		{"reply marker", tags([]string{"e", p, "", "reply"}), true, nip29.Reply{Parent: p}},
		{"reply and root", tags([]string{"e", r, "", "root"}, []string{"e", p, "", "reply"}), true, nip29.Reply{Parent: p, Root: r}},
		{"root alone is not a reply", tags([]string{"e", r, "", "root"}), false, nip29.Reply{Root: r}},
		{"unmarked e is not a reply", tags([]string{"e", p}), false, nip29.Reply{}},
		{"broadcast", tags([]string{"e", p, "", "reply"}, []string{"broadcast", "1"}), true, nip29.Reply{Parent: p, Broadcast: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := nip29.ParseReply(c.tags)
			if ok != c.ok || got != c.want {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, c.want, c.ok)
			}
		})
	}
}

package nip29_test

import (
	"github.com/nbd-wtf/go-nostr"
)

func tags(ts ...[]string) nostr.Tags {
	out := nostr.Tags{}
	for _, t := range ts {
		out = append(out, nostr.Tag(t))
	}
	return out
}

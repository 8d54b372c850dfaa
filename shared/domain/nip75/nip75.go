// Package nip75 is NIP-75's zap goal as the relay tells it apart and
// checks it, pure. Its kind, 9041, is also Buzz's unban
// (shared/domain/kinds ModerationUnban): a 9041 with an amount tag is a
// zap goal (Flotilla posts one in a room: content the title, amount,
// relays, summary, h), one without is the unban, as Amethyst decides.
package nip75

import (
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// IsGoal reports whether a 9041's tags make it a zap goal: a tag named
// amount (its value is CheckGoal's).
func IsGoal(tags nostr.Tags) bool {
	for _, t := range tags {
		if len(t) > 0 && t[0] == "amount" {
			return true
		}
	}
	return false
}

// CheckGoal checks a zap goal's tags as NIP-75 asks: its amount a whole
// number of millisats above 0, and a relays tag naming at least one relay
// where its zaps are tallied.
func CheckGoal(tags nostr.Tags) error {
	amount, _ := filter.TagValue(tags, "amount")
	if n, err := strconv.ParseUint(amount, 10, 63); err != nil || n == 0 {
		return reject.Invalidf("a zap goal's amount tag must be a whole number of millisats above 0 (NIP-75)")
	}
	if r := tags.Find("relays"); len(r) < 2 {
		return reject.Invalidf("a zap goal needs a relays tag naming where its zaps are tallied (NIP-75)")
	}
	return nil
}

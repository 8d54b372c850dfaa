package nip75

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// A 9041 is a zap goal by an amount tag, whatever else it carries; Buzz's
// unban (p, reason) never is. A goal's amount is millisats above 0 and it
// names where its zaps are tallied.
func TestGoal(t *testing.T) {
	const pk = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	flotilla := nostr.Tags{{"summary", "a new roof"}, {"amount", "1000"}, {"relays", "wss://relay.example"}, {"-"}, {"h", "general"}}
	for _, c := range []struct {
		name   string
		tags   nostr.Tags
		goal   bool
		reason string // CheckGoal's refusal, "" none
	}{
		{name: "Flotilla's goal in a room", tags: flotilla, goal: true},
		{name: "NIP-75's example", tags: nostr.Tags{{"relays", "wss://a.example", "wss://b.example"}, {"amount", "210000"}, {"closed_at", "1700000000"}}, goal: true},
		{name: "Buzz's unban", tags: nostr.Tags{{"p", pk}}},
		{name: "Buzz's unban with a reason", tags: nostr.Tags{{"p", pk}, {"reason", "appeal granted"}}},
		{name: "an amount tag with no value", tags: nostr.Tags{{"amount"}, {"relays", "wss://r.example"}}, goal: true, reason: "amount"},
		{name: "amount zero", tags: nostr.Tags{{"amount", "0"}, {"relays", "wss://r.example"}}, goal: true, reason: "amount"},
		{name: "amount negative", tags: nostr.Tags{{"amount", "-5"}, {"relays", "wss://r.example"}}, goal: true, reason: "amount"},
		{name: "amount not a number", tags: nostr.Tags{{"amount", "1e3"}, {"relays", "wss://r.example"}}, goal: true, reason: "amount"},
		{name: "amount too large", tags: nostr.Tags{{"amount", "99999999999999999999"}, {"relays", "wss://r.example"}}, goal: true, reason: "amount"},
		{name: "no relays", tags: nostr.Tags{{"amount", "1000"}, {"p", pk}}, goal: true, reason: "relays"},
		{name: "an empty relays tag", tags: nostr.Tags{{"amount", "1000"}, {"relays"}}, goal: true, reason: "relays"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := IsGoal(c.tags); got != c.goal {
				t.Fatalf("IsGoal = %v, want %v", got, c.goal)
			}
			if !c.goal {
				return
			}
			err := CheckGoal(c.tags)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if r, ok := reject.As(err); !ok || r.Prefix != reject.Invalid || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("got %v, want invalid: about %s", err, c.reason)
			}
		})
	}
}

package eventcheck_test

import (
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/eventcheck"
	"github.com/buzzrelay/relay/shared/testkit"
)

// BenchmarkCheck is the relay CPU spent on one event before any database
// work; the Schnorr verification dominates it.
func BenchmarkCheck(b *testing.B) {
	k := testkit.NewKey(b)
	ev := k.Event(b, 9, "hello", nostr.Tag{"h", testkit.ChannelID()})
	now := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := eventcheck.Check(ev, now); err != nil {
			b.Fatal(err)
		}
	}
}

package eventcheck_test

import (
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// BenchmarkCheck is the relay CPU spent on one event before any database
// work; the Schnorr verification dominates it. "new key" checks without
// remembering the key, "frequent key" with the key's table built.
func BenchmarkCheck(b *testing.B) {
	k := testkit.NewKey(b)
	ev := k.Event(b, 9, "hello", nostr.Tag{"h", testkit.ChannelID()})
	now := time.Now()
	for _, c := range []struct {
		name string
		sigs *sigverify.Verifier
	}{{"new key", nil}, {"frequent key", sigverify.New(sigverify.Options{After: 1})}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := eventcheck.Check(ev, now, c.sigs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

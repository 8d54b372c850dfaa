package ingest_test

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestLiveKitTagIn39000WhenOn: with LiveKit on, a stream group's
// relay-signed 39000 carries the livekit tag (nips 29.md) and a workflow
// group's does not; with LiveKit off no 39000 does.
func TestLiveKitTagIn39000WhenOn(t *testing.T) {
	h := newHarness(t)
	owner := testkit.NewKey(t)
	off, on, wf := testkit.ChannelID(), testkit.ChannelID(), testkit.ChannelID()
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", off}))
	if hasTag(h.head(off, 39000), "livekit") {
		t.Fatal("livekit tag with LiveKit off")
	}
	h.svc = h.svc.WithLiveKit(true)
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", on}))
	h.ok(owner.Event(t, 9007, "", nostr.Tag{"h", wf}, nostr.Tag{"channel_type", "workflow"}))
	if meta := h.head(on, 39000); !hasTag(meta, "livekit") || meta.PubKey != h.relay.PublicKey() {
		t.Fatalf("stream group's 39000 with LiveKit on: %v", meta.Tags)
	}
	if hasTag(h.head(wf, 39000), "livekit") {
		t.Fatal("a workflow group has no LiveKit room")
	}
}

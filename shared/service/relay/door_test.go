package relay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	communities "github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/service/relay"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestDisabledCommunityRefusedOnEveryUseCase: a caller whose community was
// resolved before it was disabled (a WebSocket connection opened earlier,
// its community kept in the connection's state) is refused on every use
// case once the registry sees the disable (its TTL; 0 here), with the
// words of a host that serves nothing; nothing is stored.
func TestDisabledCommunityRefusedOnEveryUseCase(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, ratelimit.Limits{})
	reg := communities.NewRegistry(h.st, community)
	reg.TTL = 0
	h.core.Guard.Communities = reg
	alice := testkit.NewKey(t)
	c := relay.Caller{Community: community, Pubkey: alice.Pub, Connection: "conn-a"}
	h.open(t, c.Connection)
	channel := testkit.ChannelID()
	if out, err := h.core.Publish(ctx, c, alice.Event(t, kinds.CreateGroup, "", nostr.Tag{"h", channel}, nostr.Tag{"name", "c"})); err != nil || !out.Accepted {
		t.Fatalf("before the disable: %+v %v", out, err)
	}
	if err := communities.Disable(ctx, h.st, community, nil); err != nil {
		t.Fatal(err)
	}
	msg := alice.Event(t, kinds.Chat, "after the disable", nostr.Tag{"h", channel})
	filters := []nostr.Filter{{Kinds: []int{kinds.Chat}, Tags: nostr.TagMap{"h": {channel}}}}
	_, pub := h.core.Publish(ctx, c, msg)
	_, read := h.core.Read(ctx, c, relay.Request{Filters: filters})
	_, query := h.core.Read(ctx, c, relay.Request{Body: []byte(`[{"kinds":[9]}]`)})
	_, cnt := h.core.Count(ctx, c, relay.Request{Filters: filters})
	_, sub := h.core.Subscribe(ctx, c, relay.Request{Filters: filters, Sub: "s"})
	closeErr := h.core.Close(ctx, c, relay.Request{Sub: "s"})
	auth := h.core.Admit(ctx, c)
	for name, err := range map[string]error{"EVENT": pub, "REQ read": read, "POST /query": query, "COUNT": cnt, "REQ": sub, "CLOSE": closeErr, "AUTH": auth} {
		r, ok := reject.As(err)
		if !ok || r.Prefix != reject.Restricted || !communities.Unknown(err) {
			t.Errorf("%s in a disabled community: %v, want restricted: as an unknown host", name, err)
		}
	}
	if err := communities.Enable(ctx, h.st, community, nil); err != nil {
		t.Fatal(err)
	}
	for _, raw := range h.read(t, alice.Pub, channel) {
		if strings.Contains(string(raw), msg.ID) {
			t.Fatal("the event sent while the community was disabled was stored")
		}
	}
}

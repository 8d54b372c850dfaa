package relay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip43"
	communities "github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/service/relay"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// A key the community's NIP-43 gate does not admit may not vanish there
// (issue 51): the 62 is stored as the tombstone, and a non-member may store
// nothing in a closed community, so it is refused at the gate like any
// publish and deletes nothing. Once the community admits the key again
// (here: membership no longer enforced) its request goes through and its
// note, published while it was admitted, is deleted. The 62 must name the
// relay the request came in at, by host and port (relay.Caller.Origin).
func TestNonMemberVanishIsRefusedAtTheGate(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, ratelimit.Limits{})
	reg := communities.NewRegistry(h.st, community)
	h.core.Guard.Communities = reg
	p := testkit.NewKey(t)
	c := relay.Caller{Community: community, Pubkey: p.Pub, Host: "relay.example", Origin: "wss://relay.example"}
	note := p.Event(t, 1, "before the gate")
	if out, err := h.core.Publish(ctx, c, note); err != nil || !out.Accepted {
		t.Fatalf("note: %+v %v", out, err)
	}
	if err := h.st.CommunitiesSetMembershipEnforced(ctx, community, true); err != nil {
		t.Fatal(err)
	}
	reg.Forget()
	if _, err := h.core.Publish(ctx, c, p.Event(t, 1, "after")); !errors.Is(err, nip43.ErrNotMember) {
		t.Fatalf("a non-member's note: %v", err)
	}
	for _, relayTag := range []string{"wss://relay.example", "ALL_RELAYS", "wss://elsewhere.example"} {
		if _, err := h.core.Publish(ctx, c, p.Event(t, 62, "stored content", nostr.Tag{"relay", relayTag})); !errors.Is(err, nip43.ErrNotMember) {
			t.Fatalf("a non-member's 62 naming %s: %v, want the gate's refusal", relayTag, err)
		}
	}
	if err := h.st.CommunitiesSetMembershipEnforced(ctx, community, false); err != nil {
		t.Fatal(err)
	}
	reg.Forget()
	evs, err := h.core.Read(ctx, c, relay.Request{Filters: []nostr.Filter{{IDs: []string{note.ID}}}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("a refused 62 deleted the note (%d, %v)", len(evs), err)
	}
	if evs, err := h.core.Read(ctx, c, relay.Request{Filters: []nostr.Filter{{Kinds: []int{62}}}}); err != nil || len(evs) != 0 {
		t.Fatalf("a refused 62 was stored (%d, %v)", len(evs), err)
	}
	other, err := h.core.Publish(ctx, c, p.Event(t, 62, "", nostr.Tag{"relay", "wss://relay.example:8443"}))
	if err != nil || other.Accepted {
		t.Fatalf("a 62 naming another port: %+v %v", other, err)
	}
	out, err := h.core.Publish(ctx, c, p.Event(t, 62, "", nostr.Tag{"relay", "wss://relay.example:443"}))
	if err != nil || !out.Accepted {
		t.Fatalf("an admitted key's request to vanish: %+v %v", out, err)
	}
	evs, err = h.core.Read(ctx, c, relay.Request{Filters: []nostr.Filter{{IDs: []string{note.ID}}}})
	if err != nil || len(evs) != 0 {
		t.Fatalf("the note is still served (%d, %v)", len(evs), err)
	}
}

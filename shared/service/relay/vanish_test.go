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

// A key the community's NIP-43 gate no longer admits may still vanish
// (NIP-62): its note, published while it was admitted, is deleted; any
// other event from it stays refused at the gate. The 62 must name the host
// the request came in at (relay.Caller.Host).
func TestFormerMemberMayVanishPastTheGate(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, ratelimit.Limits{})
	reg := communities.NewRegistry(h.st, community)
	h.core.Guard.Communities = reg
	p := testkit.NewKey(t)
	c := relay.Caller{Community: community, Pubkey: p.Pub, Host: "relay.example"}
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
	other, err := h.core.Publish(ctx, c, p.Event(t, 62, "", nostr.Tag{"relay", "wss://elsewhere.example"}))
	if err != nil || other.Accepted {
		t.Fatalf("a 62 naming another relay: %+v %v", other, err)
	}
	out, err := h.core.Publish(ctx, c, p.Event(t, 62, "", nostr.Tag{"relay", "wss://relay.example"}))
	if err != nil || !out.Accepted {
		t.Fatalf("a former member's request to vanish: %+v %v", out, err)
	}
	if err := h.st.CommunitiesSetMembershipEnforced(ctx, community, false); err != nil {
		t.Fatal(err)
	}
	reg.Forget()
	evs, err := h.core.Read(ctx, c, relay.Request{Filters: []nostr.Filter{{IDs: []string{note.ID}}}})
	if err != nil || len(evs) != 0 {
		t.Fatalf("the note is still served (%d, %v)", len(evs), err)
	}
}

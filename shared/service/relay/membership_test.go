package relay_test

import (
	"context"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/reject"
	communities "github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/service/relay"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestMembershipGate: with the community's NIP-43 gate (its Registry), a
// community that enforces membership refuses a key that is neither an
// operator nor a member on every use case, with ErrNotMember and nothing
// stored; a member and an owner pass; turned off, everyone passes.
func TestMembershipGate(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, ratelimit.Limits{})
	reg := communities.NewRegistry(h.st, community)
	h.core.Guard.Communities = reg
	owner, member, stranger := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := communities.AddOperator(ctx, h.st, community, owner.Pub); err != nil {
		t.Fatal(err)
	}
	channel := testkit.ChannelID()
	if out, err := h.core.Publish(ctx, relay.Caller{Community: community, Pubkey: owner.Pub},
		owner.Event(t, 9007, "", nostr.Tag{"h", channel}, nostr.Tag{"name", "c"})); err != nil || !out.Accepted {
		t.Fatalf("create channel: %+v %v", out, err)
	}
	filters := []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {channel}}}}
	body := []byte(`[{"kinds":[9],"#h":["` + channel + `"]}]`)
	paths := func(k testkit.Key) map[string]error {
		c := relay.Caller{Community: community, Pubkey: k.Pub, Connection: "conn-" + k.Pub[:8]}
		h.open(t, c.Connection)
		_, pub := h.core.Publish(ctx, c, k.Event(t, kinds.Chat, "hi", nostr.Tag{"h", channel}))
		_, req := h.core.Read(ctx, c, relay.Request{Filters: filters})
		_, query := h.core.Read(ctx, c, relay.Request{Body: body})
		_, cnt := h.core.Count(ctx, c, relay.Request{Filters: filters})
		_, count := h.core.Count(ctx, c, relay.Request{Body: body})
		_, sub := h.core.Subscribe(ctx, c, relay.Request{Filters: filters, Sub: "s"})
		return map[string]error{"EVENT": pub, "read": req, "POST /query": query, "COUNT": cnt, "POST /count": count, "REQ": sub}
	}
	enforce := func(on bool) {
		t.Helper()
		if err := h.st.CommunitiesSetMembershipEnforced(ctx, community, on); err != nil {
			t.Fatal(err)
		}
		reg.Forget()
	}
	enforce(true)
	if out, err := h.core.Publish(ctx, relay.Caller{Community: community, Pubkey: owner.Pub},
		owner.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", member.Pub})); err != nil || !out.Accepted {
		t.Fatalf("9030: %+v %v", out, err)
	}
	for path, err := range paths(stranger) {
		if r, ok := reject.As(err); !ok || r.Error() != nip43.ErrNotMember.Error() {
			t.Errorf("stranger's %s: %v, want %v", path, err, nip43.ErrNotMember)
		}
	}
	for _, k := range []testkit.Key{owner, member} {
		for path, err := range paths(k) {
			if prefixOf(err) == reject.Restricted {
				t.Errorf("%.8s's %s refused: %v", k.Pub, path, err)
			}
		}
	}
	enforce(false)
	for path, err := range paths(stranger) {
		if err != nil && err.Error() == nip43.ErrNotMember.Error() {
			t.Errorf("stranger's %s still refused with enforcement off", path)
		}
	}
}

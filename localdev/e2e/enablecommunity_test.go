package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestEnableCommunityBringsItBack: a community disabled over NIP-86 comes
// back with enablecommunity, called by the deployment's default
// community's operators through its host: NIP-11, its old posts, a new
// post and a WebSocket connection (AUTH, a REQ) are served again. Nobody else may enable
// it: a stranger, a plain member of the default community, the disabled
// community's own operator (its host is refused at the door), an operator
// of another community (on its host or on the default's); each try changes
// nothing.
func TestEnableCommunityBringsItBack(t *testing.T) {
	r := StartTest(t, Options{})
	ctx := ctxT(t)
	db := r.App.Store
	opA, opB, opC, bob, stranger := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, db, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, db, "default", opA.Pub); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, db, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees", Operators: []string{opB.Pub}}); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, db, r.App.Sealer, r.App.Directory, community.Spec{ID: "wasps", Hosts: []string{"c.test"}, Name: "Wasps", Operators: []string{opC.Pub}}); err != nil {
		t.Fatal(err)
	}
	a, b, c := onHost(t, r, "a.test"), onHost(t, r, "b.test"), onHost(t, r, "c.test")
	ch := createChannelID()
	a.accept(bob, signed(t, bob, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "bob's"}, {"visibility", "open"}}, "")) // bob: a plain member of the default community
	b.accept(bob, signed(t, bob, 9007, nostr.Tags{{"h", ch}, {"name", "hive"}, {"visibility", "open"}}, ""))
	old := signed(t, bob, 9, nostr.Tags{{"h", ch}}, "before the disable")
	b.accept(bob, old)

	if st, m := a.rpc(opA, "disablecommunity", "bees"); st != http.StatusOK {
		t.Fatalf("disablecommunity: %d %v", st, m)
	}
	if st, _ := b.info(); st != http.StatusNotFound {
		t.Fatalf("disabled community's NIP-11: %d, want 404", st)
	}
	stillDisabled := func(who string) {
		t.Helper()
		if row, err := db.CommunitiesGet(ctx, "bees"); err != nil || row.DisabledAt == nil {
			t.Fatalf("after %s: bees enabled (%v)", who, err)
		}
		if st, _ := b.info(); st != http.StatusNotFound {
			t.Fatalf("after %s: bees' NIP-11 %d, want 404", who, st)
		}
	}

	// The attacks, each refused with a NIP-01 prefix and no change.
	for _, try := range []struct {
		who    string
		h      *hosted
		u      user
		status int
		prefix string
	}{
		{"a stranger on the default host", a, stranger, http.StatusForbidden, `"restricted:`},
		{"a plain member on the default host", a, bob, http.StatusForbidden, `"restricted:`},
		{"another community's operator on the default host", a, opC, http.StatusForbidden, `"restricted:`},
		{"another community's operator on its own host", c, opC, http.StatusBadRequest, `"restricted:`},
		{"the disabled community's operator on its own host", b, opB, http.StatusNotFound, `"invalid:`}, // the door: as an unknown host
		{"the disabled community's operator on the default host", a, opB, http.StatusForbidden, `"restricted:`},
	} {
		st, m := try.h.rpc(try.u, "enablecommunity", "bees")
		if st != try.status || !strings.HasPrefix(js(m["error"]), try.prefix) {
			t.Errorf("enablecommunity by %s: %d %v, want %d %s", try.who, st, m, try.status, try.prefix)
		}
		stillDisabled(try.who)
	}
	// Bad calls by the right key: invalid:, nothing changes.
	for _, params := range [][]any{nil, {""}, {7}, {"nosuch"}} {
		st, m := a.rpc(opA, "enablecommunity", params...)
		if st != http.StatusBadRequest || !strings.HasPrefix(js(m["error"]), `"invalid:`) {
			t.Errorf("enablecommunity %v: %d %v, want 400 invalid:", params, st, m)
		}
	}
	stillDisabled("bad calls")
	if st, m := a.rpc(opA, "supportedmethods"); st != http.StatusOK || !strings.Contains(js(m["result"]), `"enablecommunity"`) {
		t.Errorf("supportedmethods: %d %v", st, m)
	}

	// The default community's operator brings it back.
	if st, m := a.rpc(opA, "enablecommunity", "bees"); st != http.StatusOK || m["result"] != true {
		t.Fatalf("enablecommunity: %d %v", st, m)
	}
	if st, d := b.info(); st != http.StatusOK || d.Name != "Bees" {
		t.Fatalf("NIP-11 after enablecommunity: %d %+v", st, d)
	}
	if evs := b.events(bob, map[string]any{"ids": []string{old.ID}}); len(evs) != 1 {
		t.Fatalf("the post from before the disable: %d events", len(evs))
	}
	b.accept(bob, signed(t, bob, 9, nostr.Tags{{"h", ch}}, "after the enable"))
	rc, ok := b.authed(bob, "ws://"+b.host)
	if !ok {
		t.Fatal("enabled community: AUTH over WebSocket refused")
	}
	if ids := reqIDs(t, rc, "back", map[string]any{"ids": []string{old.ID}}); len(ids) != 1 {
		t.Fatalf("enabled community: REQ over WebSocket found %v", ids)
	}
	// Enabling an enabled community changes nothing and is no error.
	if st, m := a.rpc(opA, "enablecommunity", "bees"); st != http.StatusOK {
		t.Fatalf("enablecommunity again: %d %v", st, m)
	}
	if st, m := a.rpc(opA, "listcommunities"); st != http.StatusOK || !strings.Contains(js(m["result"]), `"enabled":true,"hosts":["b.test"],"id":"bees"`) {
		t.Errorf("listcommunities: %d %s", st, js(m["result"]))
	}
}

package e2e

import (
	"net/http"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestEveryChangeRewritesTheDirectory: NIP-11 reads the directory
// documents, never the database, so each change of what they hold must
// rewrite them after its commit. For each change (a 9033's icon over HTTP
// and over WebSocket, NIP-86's name, description, icon and membership,
// disable and enable, a new hostname, a new relay key), NIP-11 read on a
// host whose document this instance already holds shows the new value at
// once.
func TestEveryChangeRewritesTheDirectory(t *testing.T) {
	r := StartTest(t, Options{})
	ctx := ctxT(t)
	db := r.App.Store
	opA, opB := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, db, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, db, "default", opA.Pub); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, db, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees", Operators: []string{opB.Pub}}); err != nil {
		t.Fatal(err)
	}
	a, b := onHost(t, r, "a.test"), onHost(t, r, "b.test")
	rpcOK := func(h *hosted, u user, method string, params ...any) {
		t.Helper()
		if st, m := h.rpc(u, method, params...); st != http.StatusOK {
			t.Fatalf("%s: %d %v", method, st, m)
		}
	}
	nip11 := func(h *hosted) relayinfo.Document {
		t.Helper()
		st, d := h.info()
		if st != http.StatusOK {
			t.Fatalf("NIP-11 of %s: %d", h.host, st)
		}
		return d
	}
	for _, c := range []struct {
		name   string
		change func()
		shows  func() bool
	}{
		{"9033 icon over HTTP", func() {
			b.accept(opB, signed(t, opB, 9033, nostr.Tags{{"icon", "https://b.test/9033-http.png"}}, ""))
		}, func() bool { return nip11(b).Icon == "https://b.test/9033-http.png" }},
		{"9033 icon over WebSocket", func() {
			rc, ok := b.authed(opB, "ws://"+b.host)
			if !ok {
				t.Fatal("AUTH on b.test refused")
			}
			rc.sendJSON([]any{"EVENT", signed(t, opB, 9033, nostr.Tags{{"icon", "https://b.test/9033-ws.png"}}, "")})
			if ok := rc.expect("OK"); string(ok[2]) != "true" {
				t.Fatalf("9033 over WebSocket: %s", joinRaw(ok))
			}
		}, func() bool { return nip11(b).Icon == "https://b.test/9033-ws.png" }},
		{"9033 clearing the icon", func() {
			b.accept(opB, signed(t, opB, 9033, nostr.Tags{}, ""))
		}, func() bool { return nip11(b).Icon == "" }},
		{"changerelayname", func() { rpcOK(b, opB, "changerelayname", "Hive") }, func() bool { return nip11(b).Name == "Hive" }},
		{"changerelaydescription", func() { rpcOK(b, opB, "changerelaydescription", "buzzing") }, func() bool { return nip11(b).Description == "buzzing" }},
		{"changerelayicon", func() { rpcOK(b, opB, "changerelayicon", "https://b.test/86.png") }, func() bool { return nip11(b).Icon == "https://b.test/86.png" }},
		{"setrelaymembership", func() { rpcOK(b, opB, "setrelaymembership", true) }, func() bool {
			return slices.Contains(nip11(b).SupportedNIPs, relayinfo.NIP43)
		}},
		{"disablecommunity", func() { rpcOK(a, opA, "disablecommunity", "bees") }, func() bool {
			st, _ := b.info()
			return st == http.StatusNotFound
		}},
		{"enablecommunity", func() { rpcOK(a, opA, "enablecommunity", "bees") }, func() bool { return nip11(b).Name == "Hive" }},
		{"a new hostname", func() {
			if err := community.AddHost(ctx, db, "bees", "b2.test", r.App.Directory); err != nil {
				t.Fatal(err)
			}
		}, func() bool { return nip11(onHost(t, r, "b2.test")).Name == "Hive" }},
		{"a new relay key", func() {
			if _, err := community.RotateKey(ctx, db, r.App.Sealer, "bees", r.App.Directory); err != nil {
				t.Fatal(err)
			}
		}, func() bool {
			row, err := db.CommunitiesGet(ctx, "bees")
			return err == nil && nip11(b).Self == row.RelayPubkey
		}},
	} {
		if c.name != "enablecommunity" { // this instance holds b.test's document before the change
			nip11(b)
		}
		c.change()
		if !c.shows() {
			t.Errorf("%s: NIP-11 does not show the change", c.name)
		}
	}
}

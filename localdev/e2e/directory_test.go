package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// The directory (shared/service/directory): NIP-11 and a new WebSocket
// connection's host are read from documents in the bucket, never from
// Postgres, so a monitor or client polling NIP-11 keeps no Aurora awake.

// skipStatementsInProcesses skips a test that counts this process's
// statements (Store.Statements) under BUZZ_LAMBDA=processes, where the
// functions' own processes and pools serve.
func skipStatementsInProcesses(t *testing.T) {
	t.Helper()
	if binaries != nil {
		t.Skip("BUZZ_LAMBDA=processes: the statements counted are those of this process's serving pool; make test's default-mode pass of the suite runs this test")
	}
}

// TestNIP11PolledEveryMinuteMakesNoDatabaseStatement: once a host's
// document is written, NIP-11 polled across the registry's cache TTL (as
// a poll every minute always is) runs no database statement, and answers
// the same document, name, description and relay key included.
func TestNIP11PolledEveryMinuteMakesNoDatabaseStatement(t *testing.T) {
	skipStatementsInProcesses(t)
	r := StartTest(t, Options{})
	ctx := ctxT(t)
	pub, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory,
		community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees", About: "a hive"})
	if err != nil {
		t.Fatal(err)
	}
	op := testkit.NewKey(t)
	if err := community.AddOperator(ctx, r.App.Store, "bees", op.Pub); err != nil {
		t.Fatal(err)
	}
	b := onHost(t, r, "b.test")
	before := r.App.Store.Statements()
	for i := range 3 {
		if i > 0 {
			time.Sleep(community.DefaultTTL + 500*time.Millisecond) // past every cache of the database's answers
		}
		st, doc := b.info()
		if st != http.StatusOK || doc.Name != "Bees" || doc.Description != "a hive" || doc.Pubkey != pub {
			t.Fatalf("poll %d: %d %+v, want Bees, a hive, %s", i+1, st, doc, pub)
		}
	}
	if n := r.App.Store.Statements() - before; n != 0 {
		t.Fatalf("3 NIP-11 polls ran %d database statements, want 0", n)
	}

	// A rename over NIP-86 is served by the next poll, still without a
	// statement of NIP-11's own.
	if st, m := b.rpc(op, "changerelayname", "Wasps"); st != http.StatusOK {
		t.Fatalf("changerelayname: %d %v", st, m)
	}
	before = r.App.Store.Statements()
	if st, doc := b.info(); st != http.StatusOK || doc.Name != "Wasps" {
		t.Fatalf("after changerelayname: %d %q, want Wasps", st, doc.Name)
	}
	if n := r.App.Store.Statements() - before; n != 0 {
		t.Fatalf("NIP-11 after a rename ran %d database statements, want 0", n)
	}
}

// TestHostOfDisabledCommunityRefusedWithoutDatabase: a community disabled
// over NIP-86 is refused at once, and without a database statement, to
// NIP-11 (404, as an unknown host) and to a new WebSocket connection; the
// document the relay had read before the disable is never served again.
func TestHostOfDisabledCommunityRefusedWithoutDatabase(t *testing.T) {
	skipStatementsInProcesses(t)
	r := StartTest(t, Options{})
	ctx := ctxT(t)
	op, bob := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}}); err != nil {
		t.Fatal(err)
	}
	a, b := onHost(t, r, "a.test"), onHost(t, r, "b.test")
	if st, _ := b.info(); st != http.StatusOK { // this instance keeps the served document
		t.Fatalf("NIP-11 of b.test before the disable: %d", st)
	}
	if _, ok := b.authed(bob, "ws://"+b.host); !ok {
		t.Fatal("AUTH on b.test refused before the disable")
	}
	if st, m := a.rpc(op, "disablecommunity", "bees"); st != http.StatusOK {
		t.Fatalf("disablecommunity: %d %v", st, m)
	}
	before := r.App.Store.Statements()
	if st, _ := b.info(); st != http.StatusNotFound {
		t.Fatalf("NIP-11 of the disabled community: %d, want 404 (a stale document served)", st)
	}
	if !b.socketRefused(r) {
		t.Fatal("a new socket of the disabled community was served")
	}
	rc, err := b.dial()
	if err == nil { // the upgrade admitted (a slow store): the first message is refused
		rc.send(`["REQ","probe",{"limit":1}]`)
		if c := rc.expect("CLOSED"); str(t, c[2]) != notServed {
			t.Fatalf("first message to the disabled community: %s", joinRaw(c))
		}
	}
	if n := r.App.Store.Statements() - before; n != 0 {
		t.Fatalf("refusing the disabled community ran %d database statements, want 0", n)
	}
}

// TestNIP11OfUnknownHostAnswersAsDisabled: NIP-11 for a host no community
// serves and for a disabled community's host answer alike (404 with the
// same body), so the directory is no oracle of which hosts were ever
// registered; an unknown host writes no document.
func TestNIP11OfUnknownHostAnswersAsDisabled(t *testing.T) {
	r := StartTest(t, Options{})
	ctx := ctxT(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}}); err != nil {
		t.Fatal(err)
	}
	if err := community.Disable(ctx, r.App.Store, "bees", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	stB, bodyB := onHost(t, r, "b.test").do(nil, http.MethodGet, "/", "", "", nil)
	for _, h := range []string{"nowhere.test", "b.test.evil", "a.test.b.test"} {
		st, body := onHost(t, r, h).do(nil, http.MethodGet, "/", "", "", nil)
		if st != stB || string(body) != string(bodyB) || st != http.StatusNotFound {
			t.Fatalf("NIP-11 of %s: %d %s; of the disabled b.test: %d %s (want the same 404)", h, st, body, stB, bodyB)
		}
	}
	if st, _ := onHost(t, r, "a.test").info(); st != http.StatusOK {
		t.Fatalf("NIP-11 of a.test: %d", st)
	}
	if err := community.Enable(ctx, r.App.Store, "bees", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if st, _ := onHost(t, r, "b.test").info(); st != http.StatusOK {
		t.Fatalf("NIP-11 of b.test enabled again: %d", st)
	}
}

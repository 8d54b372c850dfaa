package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Issue 51, the status page: GET /healthz, with or without deep=1, tells
// anyone without an operator's token only that the relay is up (the same
// body, 30 callers at once alike); the figures go to an operator of the
// community at the host, NIP-98 signed, and are that community's alone
// (another community's newer write is not its last_write, and the
// deployment's community count is gone). A stranger's token is 403, a
// token for another URL 401, another community's operator 403.
func TestHealthzOperatorOnly(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	opA, opB, stranger, alice := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, r.App.Store, "default", opA.Pub); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory,
		community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees", Operators: []string{opB.Pub}}); err != nil {
		t.Fatal(err)
	}
	a, b := onHost(t, r, "a.test"), onHost(t, r, "b.test")
	evB := signed(t, alice, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "b"}, {"visibility", "open"}}, "")
	b.accept(alice, evB)
	// A's write is later than B's: B's last_write must not show it.
	time.Sleep(1100 * time.Millisecond)
	evA := signed(t, alice, 9007, nostr.Tags{{"h", createChannelID()}, {"name", "a"}, {"visibility", "open"}}, "")
	a.accept(alice, evA)

	const up = `{"ok":true}`
	for _, h := range []*hosted{a, b} {
		for _, path := range []string{"/healthz", "/healthz?deep=1", "/healthz?deep=true"} {
			if st, body := h.do(nil, http.MethodGet, path, "", "", nil); st != 200 || strings.TrimSpace(string(body)) != up {
				t.Errorf("anonymous %s%s: %d %s, want up only", h.host, path, st, body)
			}
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, body := a.do(nil, http.MethodGet, "/healthz?deep=1", "", "", nil)
			if st != 200 || strings.TrimSpace(string(body)) != up {
				mu.Lock()
				bad = append(bad, string(body))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("30 anonymous deep checks at once: %d answered more than up: %q", len(bad), bad[0])
	}

	wantErr := func(h *hosted, u *user, tokenBase string, status int, prefix string) {
		t.Helper()
		st, body := h.do(u, http.MethodGet, "/healthz?deep=1", "", tokenBase, nil)
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		if st != status || !strings.HasPrefix(e.Error, prefix) || strings.Contains(string(body), "last_write") {
			t.Errorf("%s deep check: %d %s, want %d %s", h.host, st, body, status, prefix)
		}
	}
	wantErr(a, &stranger, "", http.StatusForbidden, "restricted:")
	wantErr(a, &opB, "", http.StatusForbidden, "restricted:")             // another community's operator
	wantErr(b, &opA, "", http.StatusForbidden, "restricted:")             // and the other way
	wantErr(a, &opA, b.base(), http.StatusUnauthorized, "auth-required:") // a token for another host

	figures := func(h *hosted, u user) map[string]json.RawMessage {
		t.Helper()
		st, body := h.do(&u, http.MethodGet, "/healthz?deep=1", "", "", nil)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); st != 200 || err != nil {
			t.Fatalf("%s operator's deep check: %d %s", h.host, st, body)
		}
		for _, k := range []string{"ok", "database", "last_write", "open_connections", "media_bytes", "open_reports"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s operator's deep check lacks %s: %s", h.host, k, body)
			}
		}
		if _, ok := m["communities"]; ok {
			t.Errorf("%s deep check tells the deployment's community count: %s", h.host, body)
		}
		return m
	}
	lastWrite := func(m map[string]json.RawMessage) int64 {
		var n int64
		_ = json.Unmarshal(m["last_write"], &n)
		return n
	}
	fa, fb := figures(a, opA), figures(b, opB)
	if lastWrite(fb) >= int64(evA.CreatedAt) || lastWrite(fb) < int64(evB.CreatedAt) {
		t.Fatalf("community B's last_write %d: B wrote at %d, A (later) at %d", lastWrite(fb), evB.CreatedAt, evA.CreatedAt)
	}
	if lastWrite(fa) < int64(evA.CreatedAt) {
		t.Fatalf("community A's last_write %d, its write at %d", lastWrite(fa), evA.CreatedAt)
	}
}

// Issue 51, NIP-62: a request to vanish names this relay by host and
// port (ws://127.0.0.1:1 is not a relay on another port, whatever the
// loopback spelling; a scheme's default port counts as written), on
// either door; and in a community that enforces NIP-43 membership a
// non-member's 62 is refused and stores nothing, while a member's goes
// through.
func TestVanishPortAndMembership(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	alice, rl := loggedIn(t, r)
	publish(t, rl, alice, 1, nil, "alice's note")
	port := r.WSURL[strings.LastIndex(r.WSURL, ":")+1:]
	for _, other := range []string{"ws://127.0.0.1:1", "ws://localhost:1", "ws://127.0.0.1", "wss://127.0.0.1:" + port + "0"} {
		wantPrefix(t, refused(t, rl, signed(t, alice, 62, nostr.Tags{{"relay", other}}, "")), "invalid:")
		if a := newBridge(t, r, alice).submit(signed(t, alice, 62, nostr.Tags{{"relay", other}}, "")); a.Accepted || !strings.HasPrefix(a.Message, "invalid:") {
			t.Fatalf("POST /events took a request to vanish naming %s: %+v", other, a)
		}
	}
	b := newBridge(t, r, alice)
	if got := b.query(map[string]any{"authors": []string{alice.Pub}}); len(got) != 1 {
		t.Fatalf("a request naming another port deleted alice's note: %d left", len(got))
	}

	// A closed community: a stranger's 62 (with content to be served) is
	// refused at the door on both doors and stores nothing.
	op := testkit.NewKey(t)
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	bo := newBridge(t, r, op)
	if st, m := bo.rpc("setrelaymembership", true); st != http.StatusOK {
		t.Fatalf("enforcement on: %d %v", st, m)
	}
	r.ForgetCommunities()
	stranger, srl := loggedIn(t, r)
	all := nostr.Tags{{"relay", "ALL_RELAYS"}}
	wantPrefix(t, refused(t, srl, signed(t, stranger, 62, all, "arbitrary content in a closed community")), "restricted:")
	if a := newBridge(t, r, stranger).submit(signed(t, stranger, 62, all, "over HTTP")); a.Accepted || !strings.HasPrefix(a.Message, "restricted:") {
		t.Fatalf("POST /events took a non-member's 62: %+v", a)
	}
	if st, m := bo.rpc("setrelaymembership", false); st != http.StatusOK {
		t.Fatalf("enforcement off: %d %v", st, m)
	}
	r.ForgetCommunities()
	if got := b.query(map[string]any{"kinds": []int{62}, "authors": []string{stranger.Pub}}); len(got) != 0 {
		t.Fatalf("a non-member's 62 was stored: %d", len(got))
	}
	// Named by this relay's own port (any loopback spelling), alice's goes.
	if a := b.submit(signed(t, alice, 62, nostr.Tags{{"relay", "ws://localhost:" + port}}, "")); !a.Accepted {
		t.Fatalf("alice's request to vanish naming this relay: %+v", a)
	}
}

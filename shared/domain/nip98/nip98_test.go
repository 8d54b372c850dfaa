package nip98_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip98"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

const url = "http://relay.example:8080/events"

// openStore opens a fresh migrated database.
func openStore(t *testing.T) *store.Store {
	t.Helper()
	return testkit.NewStore(t, store.Options{})
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	v := &nip98.Verifier{Replay: st}
	k := testkit.NewKey(t)
	now := time.Now()
	body := []byte(`{"kind":9}`)
	tokenWith := func(kind int, at time.Time, tags ...nostr.Tag) string {
		ev := k.EventAt(t, at, kind, "", tags...)
		b, _ := ev.MarshalJSON()
		return "Nostr " + base64.StdEncoding.EncodeToString(b)
	}
	tampered := func() string {
		ev := k.EventAt(t, now, 27235, "", nostr.Tag{"u", url}, nostr.Tag{"method", "POST"})
		ev.Sig = strings.Repeat("0", 128)
		b, _ := ev.MarshalJSON()
		return "Nostr " + base64.StdEncoding.EncodeToString(b)
	}
	cases := []struct {
		name, header, method, url string
		body                      []byte
		want                      string // "" = ok
	}{
		{"valid", k.Token(t, "POST", url, body, now), "POST", url, body, ""},
		{"method compared case-insensitively", k.Token(t, "post", url, nil, now), "POST", url, body, ""},
		{"trailing slash and host case", k.Token(t, "POST", "http://RELAY.example:8080/events/", nil, now), "POST", url, body, ""},
		{"missing", "", "POST", url, body, "auth-required: missing Authorization"},
		{"other scheme", "Bearer abc", "POST", url, body, "auth-required: Authorization must use the Nostr scheme"},
		{"not base64", "Nostr !!!", "POST", url, body, "auth-required: Authorization token is not base64"},
		{"not json", "Nostr " + base64.StdEncoding.EncodeToString([]byte("hello")), "POST", url, body, "auth-required: Authorization token is not a JSON"},
		{"wrong kind", tokenWith(27236, now, nostr.Tag{"u", url}, nostr.Tag{"method", "POST"}), "POST", url, body, "auth-required: auth event kind"},
		{"bad signature", tampered(), "POST", url, body, "auth-required: auth event signature"},
		{"stale", k.Token(t, "POST", url, nil, now.Add(-61*time.Second)), "POST", url, body, "auth-required: auth event created_at"},
		// Well past the skew: created_at is whole seconds on the wall clock,
		// so 61 s ahead can be 60 s ahead by the time Verify runs (the
		// boundary itself is authevent's test, on a fixed clock).
		{"future", k.Token(t, "POST", url, nil, now.Add(120*time.Second)), "POST", url, body, "auth-required: auth event created_at"},
		{"no u", tokenWith(27235, now, nostr.Tag{"method", "POST"}), "POST", url, body, "auth-required: auth event has no u tag"},
		{"wrong url", k.Token(t, "POST", "http://relay.example:8080/query", nil, now), "POST", url, body, "auth-required: auth event u tag"},
		{"wrong host", k.Token(t, "POST", "http://evil.example/events", nil, now), "POST", url, body, "auth-required: auth event u tag"},
		{"no method", tokenWith(27235, now, nostr.Tag{"u", url}), "POST", url, body, "auth-required: auth event has no method"},
		{"wrong method", k.Token(t, "GET", url, nil, now), "POST", url, body, "auth-required: auth event method"},
		{"payload mismatch", k.Token(t, "POST", url, []byte("other"), now), "POST", url, body, "auth-required: auth event payload hash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pk, err := v.Verify(ctx, nip98.Request{Community: "default", Authorization: c.header, Method: c.method, URL: c.url, Body: c.body})
			if c.want == "" {
				if err != nil || pk != k.Pub {
					t.Fatalf("want %s, got %q %v", k.Pub, pk, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("want %q, got %v", c.want, err)
			}
		})
	}
	t.Run("replay refused", func(t *testing.T) {
		tok := k.Token(t, "POST", url, nil, now)
		if _, err := v.Verify(ctx, nip98.Request{Community: "default", Authorization: tok, Method: "POST", URL: url}); err != nil {
			t.Fatal(err)
		}
		// A second verifier shares the table, as another Lambda instance would.
		other := &nip98.Verifier{Replay: st}
		_, err := other.Verify(ctx, nip98.Request{Community: "default", Authorization: tok, Method: "POST", URL: url})
		if err == nil || !strings.Contains(err.Error(), "already used") {
			t.Fatalf("replay: %v", err)
		}
		// The replay table is per community.
		if _, err := other.Verify(ctx, nip98.Request{Community: "other", Authorization: tok, Method: "POST", URL: url}); err != nil {
			t.Fatalf("same token in another community: %v", err)
		}
	})
}

// TestReplayGuardAcrossACrash (issue 55): the replay guard trusts nothing
// about when its database last started. A private server is crashed
// (pg_ctl -m immediate: what was not flushed is lost) between a token's
// use and its replay, and between another token's signing and its first
// use: the replay is still refused, and the token signed before the crash
// is accepted after it (an Aurora resume or failover must not turn a
// client's fresh token into a 401).
func TestReplayGuardAcrossACrash(t *testing.T) {
	ctx := context.Background()
	c := testkit.PrivateCluster(t)
	open := func() *store.Store {
		st, err := store.Open(ctx, c.DSN, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	k := testkit.NewKey(t)
	now := time.Now()
	req := func(tok string) nip98.Request {
		return nip98.Request{Community: "default", Method: "POST", URL: url, Authorization: tok}
	}
	used := k.Token(t, "POST", url, nil, now.Add(-2*time.Second))
	signedBefore := k.Token(t, "POST", url, nil, now.Add(-time.Second))
	v := &nip98.Verifier{Replay: st}
	if _, err := v.Verify(ctx, req(used)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	c.Stop("immediate")
	c.Start()
	st = open()
	defer st.Close()
	v = &nip98.Verifier{Replay: st}
	if _, err := v.Verify(ctx, req(used)); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("a token used before the crash, replayed after it: %v, want already used", err)
	}
	if _, err := v.Verify(ctx, req(signedBefore)); err != nil {
		t.Errorf("a token signed before the crash, first used after it: %v", err)
	}
}

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/buzzrelay/relay/shared/domain/authevent"
)

// The test push gateway: what buzz-push-gateway gets from the relay.
type gateway struct {
	t     *testing.T
	mu    sync.Mutex
	wakes []map[string]json.RawMessage
	srv   *httptest.Server
	// relayKey is the key every wake must be NIP-98-signed by.
	relayKey string
}

const gatewayPath = "/v1/deliveries"

func newGateway(t *testing.T) *gateway {
	g := &gateway{t: t}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := authevent.Parse(r.Header.Get("Authorization"))
		if err != nil {
			t.Errorf("wake without a NIP-98 token: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		sum := sha256.Sum256(body)
		ok, _ := ev.CheckSignature()
		u, _ := tagValue(ev.Tags, "u")
		method, _ := tagValue(ev.Tags, "method")
		payload, _ := tagValue(ev.Tags, "payload")
		g.mu.Lock()
		key := g.relayKey
		g.mu.Unlock()
		if !ok || ev.Kind != 27235 || ev.PubKey != key || u != g.srv.URL+gatewayPath || method != "POST" || payload != hex.EncodeToString(sum[:]) {
			t.Errorf("wake's NIP-98 token does not bind it: kind %d, key %s (want %s), u %q, method %q, payload ok %v, signature ok %v",
				ev.Kind, ev.PubKey, key, u, method, payload == hex.EncodeToString(sum[:]), ok)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("wake body %s: %v", body, err)
		}
		g.mu.Lock()
		g.wakes = append(g.wakes, m)
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"accepted"}`))
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *gateway) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.wakes)
}

func tagValue(tags nostr.Tags, name string) (string, bool) {
	for _, t := range tags {
		if len(t) >= 2 && t[0] == name {
			return t[1], true
		}
	}
	return "", false
}

// pushInfo is the NIP-11 document's push parts.
type pushInfo struct {
	Pubkey     string   `json:"pubkey"`
	Extensions []string `json:"supported_extensions"`
	Push       *struct {
		Origin string `json:"origin"`
		Keys   []struct {
			ID, Pubkey string
			Current    bool
		} `json:"keys"`
		AppProfiles []struct{ ID, Transport string } `json:"app_profiles"`
		PushKinds   []int                            `json:"push_kinds"`
		Classes     map[string][]string              `json:"class_support"`
		Limitation  map[string]int                   `json:"limitation"`
	} `json:"push"`
}

func fetchPushInfo(t *testing.T, r *Relay) pushInfo {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.HTTPURL+"/", nil)
	req.Header.Set("Accept", "application/nostr+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info pushInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if info.Push == nil || len(info.Push.Keys) != 1 {
		t.Fatalf("NIP-11 has no push descriptor with one key: %+v", info)
	}
	return info
}

// leaseEvent is u's lease d, its content (plain, as JSON) NIP-44-encrypted
// to the executor key of info.
func leaseEvent(t *testing.T, u user, info pushInfo, d string, exp int64, plain map[string]any) nostr.Event {
	t.Helper()
	b, _ := json.Marshal(plain)
	conv, err := nip44.GenerateConversationKey(info.Push.Keys[0].Pubkey, u.Secret)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := nip44.Encrypt(string(b), conv)
	if err != nil {
		t.Fatal(err)
	}
	return signed(t, u, 30350, nostr.Tags{{"d", d}, {"expiration", strconv.FormatInt(exp, 10)}, {"exec", info.Push.Keys[0].ID}}, ct)
}

func activeLease(info pushInfo, gen int, endpoint string, filter map[string]any, class string) map[string]any {
	return map[string]any{
		"v": 1, "origin": info.Push.Origin, "app_profile": "buzz-ios-production", "transport": "apns",
		"endpoint": endpoint, "generation": gen, "active": true,
		"subscriptions": []any{map[string]any{"filter": filter, "class": class}},
	}
}

func leaseRelay(t *testing.T) (*Relay, *gateway, pushInfo) {
	g := newGateway(t)
	r := StartTest(t, Options{Push: true, Env: map[string]string{
		"PUSH_GATEWAY_URL": g.srv.URL + gatewayPath, "PUSH_APP_PROFILES": "buzz-ios-production=apns",
	}})
	info := fetchPushInfo(t, r)
	g.mu.Lock()
	g.relayKey = info.Pubkey
	g.mu.Unlock()
	return r, g, info
}

// TestNIPPLLeaseFromItsAuthorWakesTheGatewayWithoutContent: a lease
// published by its NIP-42-authenticated author is accepted and one from
// anyone else refused; a matching event sends the gateway one wake, signed
// with NIP-98 by the relay key, carrying only the endpoint grant, a request
// id and an expiry; a superseded (revoked) or expired lease sends nothing,
// and a replay of an older generation is refused.
func TestNIPPLLeaseFromItsAuthorWakesTheGatewayWithoutContent(t *testing.T) {
	r, g, info := leaseRelay(t)
	w := watchPush(r)
	alice, arl := loggedIn(t, r)
	bob, brl := loggedIn(t, r)
	_, mrl := loggedIn(t, r)
	open := createChannel(t, arl, alice, "open")
	now := time.Now().Unix()
	filter := map[string]any{"kinds": []int{9}, "#h": []string{open}}

	gen1 := leaseEvent(t, bob, info, "install-1", now+3600, activeLease(info, 1, "grant-bob-1", filter, "default"))
	// Another key cannot publish it (the relay's authorship rule).
	wantPrefix(t, refused(t, mrl, gen1), "restricted:")
	if err := brl.Publish(ctxT(t), gen1); err != nil {
		t.Fatalf("bob's own lease: %v", err)
	}
	m1 := publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "wake bob")
	w.settle(t, m1)
	if g.count() != 1 {
		t.Fatalf("gateway got %d wakes for one matching event, want 1", g.count())
	}
	wake := g.wakes[0]
	var keys []string
	for k := range wake {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"endpoint_grant", "expires_at", "request_id", "v"}) {
		t.Errorf("wake carries %v, want only endpoint_grant, expires_at, request_id, v", keys)
	}
	if string(wake["endpoint_grant"]) != `"grant-bob-1"` {
		t.Errorf("wake endpoint_grant %s", wake["endpoint_grant"])
	}
	raw, _ := json.Marshal(wake)
	for _, secret := range []string{m1.ID, m1.Content, open, alice.Pub, gen1.ID} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("wake %s leaks %q", raw, secret)
		}
	}

	// Superseded: a revocation (generation 2, inactive) stops the wakes.
	time.Sleep(1100 * time.Millisecond)
	revoke := leaseEvent(t, bob, info, "install-1", now+3600, map[string]any{"v": 1, "origin": info.Push.Origin, "generation": 2, "active": false})
	if err := brl.Publish(ctxT(t), revoke); err != nil {
		t.Fatalf("revocation: %v", err)
	}
	// A replay of generation 1, newer by created_at, is refused.
	time.Sleep(1100 * time.Millisecond)
	replay := leaseEvent(t, bob, info, "install-1", now+3600, activeLease(info, 1, "grant-bob-1", filter, "default"))
	wantPrefix(t, refused(t, brl, replay), "invalid:")
	// Expired: a lease of a few seconds, then silence.
	short := leaseEvent(t, bob, info, "install-2", time.Now().Unix()+2, activeLease(info, 1, "grant-bob-2", filter, "default"))
	if err := brl.Publish(ctxT(t), short); err != nil {
		t.Fatalf("short lease: %v", err)
	}
	time.Sleep(3 * time.Second)
	m2 := publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "nobody to wake")
	w.settle(t, m2)
	r.Lambda.Wait()
	if g.count() != 1 {
		t.Errorf("gateway got %d wakes in all, want 1: a revoked or expired lease woke it", g.count())
	}
}

// TestNIPPLDescriptorMatchesWhatTheRelayAccepts: NIP-11 advertises nip-pl
// and nip-9a, one current executor key (the one leases decrypt with), and
// the limits and kinds the relay enforces: a kind outside push_kinds, a
// class outside class_support, a ttl beyond max_lease_ttl, another origin,
// another app profile, another key's #p, an unnarrowed filter, or content
// not encrypted to the key are refused invalid:.
func TestNIPPLDescriptorMatchesWhatTheRelayAccepts(t *testing.T) {
	r, _, info := leaseRelay(t)
	bob, brl := loggedIn(t, r)
	for _, ext := range []string{"nip-pl", "nip-9a"} {
		if !slices.Contains(info.Extensions, ext) {
			t.Errorf("supported_extensions %v lacks %s", info.Extensions, ext)
		}
	}
	if !info.Push.Keys[0].Current || info.Push.Keys[0].Pubkey == info.Pubkey {
		t.Errorf("executor key %+v: want one current key of its own, not the relay key", info.Push.Keys[0])
	}
	if len(info.Push.AppProfiles) != 1 || info.Push.AppProfiles[0].ID != "buzz-ios-production" {
		t.Errorf("app_profiles %+v", info.Push.AppProfiles)
	}
	now := time.Now().Unix()
	ttl := int64(info.Push.Limitation["max_lease_ttl"])
	ok := map[string]any{"kinds": []int{9}, "authors": []string{bob.Pub}}
	notPushKind := 1
	for slices.Contains(info.Push.PushKinds, notPushKind) {
		notPushKind++
	}
	other := map[string]any{"kinds": []int{9}, "#p": []string{nostr.GeneratePrivateKey()}}
	cases := []struct {
		name  string
		exp   int64
		plain map[string]any
	}{
		{"kind outside push_kinds", now + 60, activeLease(info, 1, "g", map[string]any{"kinds": []int{notPushKind}, "authors": []string{bob.Pub}}, "default")},
		{"class outside class_support", now + 60, activeLease(info, 1, "g", ok, "urgent")},
		{"ttl beyond max_lease_ttl", now + ttl + 3600, activeLease(info, 1, "g", ok, "default")},
		{"another origin", now + 60, func() map[string]any {
			m := activeLease(info, 1, "g", ok, "default")
			m["origin"] = "wss://elsewhere"
			return m
		}()},
		{"another app profile", now + 60, func() map[string]any { m := activeLease(info, 1, "g", ok, "default"); m["app_profile"] = "x"; return m }()},
		{"another key's #p", now + 60, activeLease(info, 1, "g", other, "default")},
		{"not narrowed", now + 60, activeLease(info, 1, "g", map[string]any{"kinds": []int{9}}, "default")},
		{"since", now + 60, activeLease(info, 1, "g", map[string]any{"kinds": []int{9}, "authors": []string{bob.Pub}, "since": 1}, "default")},
		{"unknown field", now + 60, func() map[string]any { m := activeLease(info, 1, "g", ok, "default"); m["note"] = "x"; return m }()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantPrefix(t, refused(t, brl, leaseEvent(t, bob, info, "d-"+c.name, c.exp, c.plain)), "invalid:")
		})
	}
	t.Run("not encrypted to the executor key", func(t *testing.T) {
		ev := signed(t, bob, 30350, nostr.Tags{{"d", "plain"}, {"expiration", strconv.FormatInt(now+60, 10)}, {"exec", info.Push.Keys[0].ID}}, `{"v":1}`)
		wantPrefix(t, refused(t, brl, ev), "invalid:")
	})
	t.Run("public filter tag", func(t *testing.T) {
		ev := leaseEvent(t, bob, info, "tags", now+60, activeLease(info, 1, "g", ok, "default"))
		ev.Tags = append(ev.Tags, nostr.Tag{"k", "9"})
		if err := ev.Sign(bob.Secret); err != nil {
			t.Fatal(err)
		}
		wantPrefix(t, refused(t, brl, ev), "invalid:")
	})
	// The same lease within the advertised limits is accepted.
	if err := brl.Publish(ctxT(t), leaseEvent(t, bob, info, "good", now+ttl-60, activeLease(info, 1, "g", ok, "time_sensitive"))); err != nil {
		t.Errorf("a lease within the descriptor: %v", err)
	}
}

package emulator_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/shared/domain/nip98"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/relay"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/transport/apigw"
	"github.com/buzzrelay/relay/shared/transport/bridge"
	httproutes "github.com/buzzrelay/relay/shared/transport/routes"
)

// TestEventsOverHTTP drives POST /events, NIP-11 and /healthz through the
// emulator and the real API Gateway adapter, as a Buzz client would.
func TestEventsOverHTTP(t *testing.T) {
	srv, key := newEventsServer(t, 4, map[string]bool{"POST /events": true, "GET /": true, "GET /healthz": true})
	defer srv.Close()

	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	post := func(k testkit.Key, ev any, auth string) (int, map[string]any) {
		t.Helper()
		body, _ := json.Marshal(ev)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/events", bytes.NewReader(body))
		if auth == "" {
			auth = k.Token(t, "post", srv.URL+"/events", body, time.Now())
		}
		if auth != "-" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}

	ch := testkit.ChannelID()
	create := alice.Event(t, 9007, "", nostr.Tag{"h", ch}, nostr.Tag{"name", "general"})
	if code, out := post(alice, create, ""); code != 200 || out["accepted"] != true || out["event_id"] != create.ID {
		t.Fatalf("create: %d %v", code, out)
	}
	msg := bob.Event(t, 9, "hello", nostr.Tag{"h", ch})
	if code, out := post(bob, msg, ""); code != 200 || out["accepted"] != true || out["message"] != "" {
		t.Fatalf("message: %d %v", code, out)
	}
	// Same body again: a token made in the same second would be the same
	// event (a replay), so this one is dated a second later.
	body, _ := json.Marshal(msg)
	again := bob.Token(t, "POST", srv.URL+"/events", body, time.Now().Add(time.Second))
	if code, out := post(bob, msg, again); code != 200 || out["accepted"] != true || !strings.HasPrefix(out["message"].(string), "duplicate:") {
		t.Fatalf("duplicate: %d %v", code, out)
	}
	// Signed by another key than the token's: 403.
	if code, out := post(bob, alice.Event(t, 9, "x", nostr.Tag{"h", ch}), ""); code != 403 || !strings.HasPrefix(out["error"].(string), "restricted:") {
		t.Fatalf("foreign event: %d %v", code, out)
	}
	// NIP-98 failures: 401.
	if code, out := post(bob, msg, "-"); code != 401 || !strings.HasPrefix(out["error"].(string), "auth-required:") {
		t.Fatalf("no auth: %d %v", code, out)
	}
	stale := bob.Token(t, "POST", srv.URL+"/events", nil, time.Now().Add(-5*time.Minute))
	if code, _ := post(bob, msg, stale); code != 401 {
		t.Fatalf("stale token: %d", code)
	}
	reused := bob.Token(t, "POST", srv.URL+"/events", nil, time.Now())
	post(bob, bob.Event(t, 9, "first use", nostr.Tag{"h", ch}), reused)
	if code, out := post(bob, bob.Event(t, 9, "replay", nostr.Tag{"h", ch}), reused); code != 401 || !strings.Contains(out["error"].(string), "already used") {
		t.Fatalf("replayed token: %d %v", code, out)
	}
	// Malformed body: 400, and a rule rejection: accepted false with its prefix.
	if code, out := post(bob, "not an event", ""); code != 400 || !strings.HasPrefix(out["error"].(string), "invalid:") {
		t.Fatalf("bad body: %d %v", code, out)
	}
	if code, out := post(bob, bob.Event(t, 39000, ""), ""); code != 200 || out["accepted"] != false || !strings.HasPrefix(out["message"].(string), "restricted:") {
		t.Fatalf("relay-only kind: %d %v", code, out)
	}

	// NIP-11 and health.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.Header.Set("Accept", "application/nostr+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Self       string `json:"self"`
		NIPs       []int  `json:"supported_nips"`
		Limitation struct {
			MaxMessageLength int `json:"max_message_length"`
		} `json:"limitation"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if info.Self != key.PublicKey() || info.Limitation.MaxMessageLength > 131072 || len(info.NIPs) == 0 {
		t.Fatalf("nip-11: %+v", info)
	}
	resp, err = http.Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
}

// newEventsServer serves the bridge with the ingest path behind the
// emulator on the given routes, on a fresh database.
func newEventsServer(t testing.TB, conns int32, routes map[string]bool) (*httptest.Server, *signer.Key) {
	t.Helper()
	st := testkit.NewStore(t, store.Options{MaxConns: conns})
	key := testkit.RelayKey(t)
	log := testkit.Quiet()
	b := &bridge.Bridge{Database: st, Core: &relay.Relay{Ingest: ingest.New(st, key), Log: log}, Signer: key, Log: log,
		Verifier: &nip98.Verifier{Replay: st}, Communities: community.NewRegistry(st, "default")}
	fn := apigw.HTTP(&httproutes.Server{Bridge: b, Side: httproutes.Write}, apigw.Origin{Scheme: "http"})
	api := &emulator.HTTPAPI{Routes: map[string]emulator.HTTPHandler{}}
	for r := range routes {
		api.Routes[r] = fn
	}
	return httptest.NewServer(api), key
}

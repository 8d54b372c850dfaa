package e2e

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Behind one public hostname (BUZZ_PUBLIC_URL, e.g. CloudFront in front of
// both APIs) NIP-98 `u` and the NIP-42 relay tag name that host, whatever
// host the request reached the handlers with.
func TestPublicURLNamesTheRelay(t *testing.T) {
	r := StartTest(t, Options{Env: map[string]string{"BUZZ_PUBLIC_URL": "https://relay.example.com", "BUZZ_PUBLIC_SCHEME": ""}})
	k := testkit.NewKey(t)
	post := func(u string) int {
		body := []byte(`[{"kinds":[9],"limit":1}]`)
		req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/query", bytes.NewReader(body))
		req.Header.Set("Authorization", k.Token(t, http.MethodPost, u, body, time.Now()))
		resp, _, _ := do(t, req)
		return resp.StatusCode
	}
	if s := post("https://relay.example.com/query"); s != 200 {
		t.Fatalf("token for the public URL: %d", s)
	}
	if s := post(r.HTTPURL + "/query"); s != 401 {
		t.Fatalf("token for the handler's own host: %d, want 401", s)
	}

	u := testkit.NewKey(t)
	rc := dialRaw(t, r)
	rc.sendJSON([]any{"REQ", "s", nostr.Filter{Kinds: []int{1}}})
	challenge := str(t, rc.expect("AUTH")[1])
	rc.expect("CLOSED")
	wrong := signed(t, u, 22242, nostr.Tags{{"relay", r.WSURL}, {"challenge", challenge}}, "")
	rc.sendJSON([]any{"AUTH", wrong})
	if ok := rc.expect("OK"); string(ok[2]) != "false" {
		t.Fatalf("AUTH naming the handler's host: %s", joinRaw(ok))
	}
	right := signed(t, u, 22242, nostr.Tags{{"relay", "wss://relay.example.com"}, {"challenge", challenge}}, "")
	rc.sendJSON([]any{"AUTH", right})
	if ok := rc.expect("OK"); string(ok[2]) != "true" {
		t.Fatalf("AUTH naming the public URL: %s", joinRaw(ok))
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip98"
)

const testKey = "0000000000000000000000000000000000000000000000000000000000000001"

// TestTokenVerifies: the relay's own NIP-98 verifier accepts the token for
// the request it was made for, and refuses it for another body.
func TestTokenVerifies(t *testing.T) {
	now := time.Now()
	body := []byte(`[{"kinds":[9],"#h":["c"],"top_level":true}]`)
	url := "http://127.0.0.1:8080/query"
	tok, err := token(testKey, "POST", url, body, true, now)
	if err != nil {
		t.Fatal(err)
	}
	v := &nip98.Verifier{Now: func() time.Time { return now }}
	pub, err := v.Verify(context.Background(), nip98.Request{Authorization: tok, Method: "POST", URL: url, Body: body, RequirePayload: true})
	if err != nil {
		t.Fatalf("the relay refuses the token: %v", err)
	}
	if want, _ := nostr.GetPublicKey(testKey); pub != want {
		t.Errorf("pubkey %s, want %s", pub, want)
	}
	if _, err := v.Verify(context.Background(), nip98.Request{Authorization: tok, Method: "POST", URL: url, Body: []byte("[]")}); err == nil {
		t.Error("a token for one body verified for another")
	}
	if _, err := token("xyz", "POST", url, nil, false, now); err == nil {
		t.Error("a malformed key was accepted")
	}
}

func TestSignEvent(t *testing.T) {
	out, err := signEvent(testKey, []byte(`{"kind":9,"content":"hello","tags":[["h","c"]]}`), time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	var ev nostr.Event
	if err := json.Unmarshal(out, &ev); err != nil {
		t.Fatal(err)
	}
	if ok, err := ev.CheckSignature(); !ok || err != nil || ev.CreatedAt != 1700000000 || ev.Content != "hello" || ev.Tags.GetFirst([]string{"h"}) == nil {
		t.Errorf("signed event %s: signature ok %v (%v)", out, ok, err)
	}
}

func TestRunNewKey(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run("new", "POST", "http://127.0.0.1:8080/count", "", "", &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "Nostr ") || !strings.Contains(stderr.String(), "public key ") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

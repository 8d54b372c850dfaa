// Package blossom_test runs the relay's media routes end to end with a
// real Blossom client from npm (blossom-client-sdk 5.1.0, pinned in
// package-lock.json; nostr-tools 2.25.2 signs) against the harness relay
// (localdev/e2e) over a local S3 server, and benchmarks them beside plain
// S3 (bench_test.go).
package blossom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/service/media"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestBlossomClient: upload with BUD-06 preflight, download with Range,
// list (another key's refused), a blob shared in a private channel
// downloaded through the SDK's 401-then-sign flow (a get authorization) by
// a member and refused (404) to another key, delete, the bytes-per-day and bytes-stored quotas, a non-member and a banned key
// refused, Buzz's /media routes with NIP-98, a 50 MB upload through the
// presigned path the deployed shape needs, a tampered upload refused and
// not stored, and bad input (24242 for another server, verb or hash,
// expired, unsigned; a body larger than announced; a hash that is not
// lowercase hex), each a 4xx with X-Reason. Without node it is skipped
// (BUZZ_REQUIRE_INTEROP=1 makes that a failure).
func TestBlossomClient(t *testing.T) {
	node, dir := e2e.NodePackages(t, ".", "blossom-client-sdk test", map[string]string{"blossom-client-sdk": "5.1.0", "nostr-tools": "2.25.2"})

	r := e2e.StartTest(t, e2e.Options{Media: true})
	q := e2e.StartTest(t, e2e.Options{Media: true, Env: map[string]string{
		"MEDIA_KEY_BYTES_PER_DAY": "1572864", "MEDIA_COMMUNITY_BYTES_STORED": "2621440"}})
	member, stranger, banned, other := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	m2, m3 := testkit.NewKey(t), testkit.NewKey(t)
	ch := join(t, r, member)
	for _, k := range []testkit.Key{member, m2, m3} {
		join(t, q, k)
	}
	join(t, r, banned)
	ban(t, r, banned.Pub)
	join(t, r, other)

	cfg, _ := json.Marshal(map[string]any{
		"server": r.HTTPURL, "quotaServer": q.HTTPURL, "member": member.Secret, "stranger": stranger.Secret,
		"banned": banned.Secret, "maxBytes": blossom.Defaults.MaxBytes, "quotaMembers": []string{m2.Secret, m3.Secret},
		"other": other.Secret, "channel": ch,
	})
	var got struct {
		Checks, Failures []string
		Figures          map[string]any
	}
	e2e.RunNode(t, node, dir, 4*time.Minute, &got, "blossom.mjs", string(cfg))
	t.Logf("%d checks; figures %v", len(got.Checks), got.Figures)
	for _, f := range got.Failures {
		t.Error(f)
	}
	if len(got.Checks) < 30 {
		t.Errorf("only %d checks ran: %v", len(got.Checks), got.Checks)
	}
	// NIP-94: the uploaded blob's file metadata, shared in the channel.
	meta := member.Event(t, 1063, "a picture", nostr.Tag{"h", ch}, nostr.Tag{"url", r.HTTPURL + "/" + strings.Repeat("a", 64) + ".png"},
		nostr.Tag{"x", strings.Repeat("a", 64)}, nostr.Tag{"m", "image/png"})
	if ok, msg := post(t, r, member, meta); !ok {
		t.Errorf("kind 1063 in a channel refused: %s", msg)
	}
	if ok, _ := post(t, r, member, member.Event(t, 1063, "no channel", nostr.Tag{"x", strings.Repeat("a", 64)})); ok {
		t.Error("kind 1063 without an h tag accepted")
	}
}

// join makes k a member: it creates a channel over POST /events (NIP-98),
// which makes its creator the owner; it returns the channel id.
func join(t testing.TB, r *e2e.Relay, k testkit.Key) string {
	t.Helper()
	ch := testkit.ChannelID()
	ev := k.Event(t, 9007, "", nostr.Tag{"h", ch}, nostr.Tag{"name", "media"},
		nostr.Tag{"channel_type", "stream"}, nostr.Tag{"visibility", "private"})
	if ok, msg := post(t, r, k, ev); !ok {
		t.Fatalf("create channel: %s", msg)
	}
	return ch
}

// post sends ev over POST /events with k's NIP-98 token.
func post(t testing.TB, r *e2e.Relay, k testkit.Key, ev *nostr.Event) (bool, string) {
	t.Helper()
	body, _ := json.Marshal(ev)
	url := r.HTTPURL + "/events"
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", k.Token(t, http.MethodPost, url, body, time.Now()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Accepted bool   `json:"accepted"`
		Message  string `json:"message"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode == 200 && out.Accepted, out.Message
}

// ban bans pubkey in the relay's default community (NIP-86 banpubkey's row).
func ban(t *testing.T, r *e2e.Relay, pubkey string) {
	t.Helper()
	ctx := context.Background()
	id := r.App.Config.DefaultCommunity
	if err := r.App.Store.PubkeyRulesPut(ctx, id, pubkey, "ban", "e2e", time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
}

// TestOperatorDeletesBlob: a community operator removes a member's blob
// through NIP-86 deleteblob; a non-hash parameter is refused.
func TestOperatorDeletesBlob(t *testing.T) {
	r := e2e.StartTest(t, e2e.Options{Media: true})
	member, op := testkit.NewKey(t), testkit.NewKey(t)
	join(t, r, member)
	ctx := context.Background()
	if err := r.App.Store.OperatorsInsert(ctx, r.App.Config.DefaultCommunity, op.Pub); err != nil {
		t.Fatal(err)
	}
	r.App.Communities.Forget()
	br := &benchRelay{r: r, key: member}
	body := bytes.Repeat([]byte("operator"), 1000)
	h := media.Hash(body)
	br.upload(t, body, h)
	rpc := func(params ...string) map[string]any {
		raw, _ := json.Marshal(map[string]any{"method": "deleteblob", "params": params})
		req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/", bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/nostr+json+rpc")
		req.Header.Set("Authorization", op.Token(t, http.MethodPost, r.HTTPURL+"/", raw, time.Now()))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	if out := rpc("nothex"); !strings.HasPrefix(fmt.Sprint(out["error"]), "invalid:") {
		t.Fatalf("deleteblob of a non-hash: %v", out)
	}
	if out := rpc(h); out["result"] != true {
		t.Fatalf("deleteblob: %v", out)
	}
	resp, err := http.Head(r.HTTPURL + "/" + h)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("HEAD after the operator's delete: %d", resp.StatusCode)
	}
}

// TestMediaRoutesOffAndCORS: without MEDIA_BUCKET the media routes are not
// served (404); with it, a browser's preflight gets BUD-01's CORS headers,
// and a refusal its reason in X-Reason.
func TestMediaRoutesOffAndCORS(t *testing.T) {
	h := strings.Repeat("a", 64)
	off := e2e.StartTest(t, e2e.Options{})
	for _, c := range [][2]string{{"GET", "/" + h}, {"PUT", "/upload"}, {"HEAD", "/upload"}, {"GET", "/list/" + h}} {
		req, _ := http.NewRequest(c[0], off.HTTPURL+c[1], nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("media off: %s %s = %d, want 404", c[0], c[1], resp.StatusCode)
		}
	}
	on := e2e.StartTest(t, e2e.Options{Media: true})
	req, _ := http.NewRequest(http.MethodOptions, on.HTTPURL+"/upload", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "PUT")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "PUT") {
		t.Errorf("CORS preflight: %d %v", resp.StatusCode, resp.Header)
	}
	req, _ = http.NewRequest(http.MethodDelete, on.HTTPURL+"/"+h, nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Message string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("X-Reason"), "auth-required:") || body.Message != resp.Header.Get("X-Reason") {
		t.Errorf("DELETE without auth: %d %q %q", resp.StatusCode, resp.Header.Get("X-Reason"), body.Message)
	}
}

package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	lk "github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// lkDo sends method path to r with a NIP-98 token of u (nil: none) whose
// u tag names tokenPath ("" = path).
func lkDo(t *testing.T, r *Relay, u *user, method, path, tokenPath string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, r.HTTPURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if tokenPath == "" {
		tokenPath = path
	}
	if u != nil {
		req.Header.Set("Authorization", u.Token(t, method, r.HTTPURL+tokenPath, append([]byte{}, body...), time.Now()))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// TestLiveKitTokenOverHTTPWithNIP98 is NIP-29 LiveKit over HTTP: the
// discovery answers 204; a member's NIP-98 GET of the group's token
// endpoint gets LiveKit's {server_url, participant_token} whose JWT names
// the member and the group's room; a stranger, a wrong group (in the same
// words), a banned member, a token naming another group's URL, no token
// and an oversized body are refused; a relay without LiveKit answers the
// discovery 404 and the token endpoint a clear refusal.
func TestLiveKitTokenOverHTTPWithNIP98(t *testing.T) {
	lkc := lk.Config{URL: "wss://livekit.example", APIKey: "APIe2e", APISecret: "an-e2e-secret-of-thirty-two-chars!"}
	r := StartTest(t, Options{Env: map[string]string{"LIVEKIT_URL": lkc.URL, "LIVEKIT_API_KEY": lkc.APIKey, "LIVEKIT_API_SECRET": lkc.APISecret}})
	owner, member, banned, stranger := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddOperator(ctxT(t), r.App.Store, "default", owner.Pub); err != nil {
		t.Fatal(err)
	}
	group := testkit.ChannelID()
	bo := newBridge(t, r, owner)
	bo.accept(signed(t, owner, 9007, nostr.Tags{{"h", group}, {"name", "av room"}}, ""))
	bo.accept(signed(t, owner, 9000, nostr.Tags{{"h", group}, {"p", member.Pub}}, ""))
	bo.accept(signed(t, owner, 9000, nostr.Tags{{"h", group}, {"p", banned.Pub}}, ""))
	rpc, _ := json.Marshal(map[string]any{"method": "banpubkey", "params": []any{banned.Pub, "test"}})
	req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/", bytes.NewReader(rpc))
	req.Header.Set("Content-Type", "application/nostr+json+rpc")
	req.Header.Set("Authorization", owner.Token(t, http.MethodPost, r.HTTPURL+"/", rpc, time.Now()))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("banpubkey: %v %v", resp, err)
	}

	if st, body := lkDo(t, r, nil, http.MethodGet, lk.DiscoveryPath, "", nil); st != http.StatusNoContent {
		t.Errorf("discovery: %d %s", st, body)
	}
	path := lk.TokenPathPrefix + group
	st, body := lkDo(t, r, &member, http.MethodGet, path, "", nil)
	if st != http.StatusOK {
		t.Fatalf("member's token: %d %s", st, body)
	}
	var got struct {
		ServerURL string `json:"server_url"`
		Token     string `json:"participant_token"`
	}
	if err := json.Unmarshal(body, &got); err != nil || got.ServerURL != lkc.URL {
		t.Fatalf("answer %s: %v", body, err)
	}
	c, err := lk.Verify(got.Token, lkc.APIKey, lkc.APISecret, time.Now())
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	if lk.PubkeyOf(c.Subject) != member.Pub || c.Video == nil || c.Video.Room != lk.RoomName("default", group) || !c.Video.RoomJoin {
		t.Errorf("claims %+v %+v", c, c.Video)
	}

	_, strangerBody := lkDo(t, r, &stranger, http.MethodGet, path, "", nil)
	for _, a := range []struct {
		name      string
		u         *user
		method    string
		path      string
		tokenPath string
		body      []byte
		status    int
		prefix    string
	}{
		{"stranger", &stranger, http.MethodGet, path, "", nil, http.StatusForbidden, "restricted:"},
		{"wrong group", &member, http.MethodGet, lk.TokenPathPrefix + "no-such-group", "", nil, http.StatusForbidden, "restricted:"},
		{"banned member", &banned, http.MethodGet, path, "", nil, http.StatusForbidden, "blocked:"},
		{"token for another group's URL", &member, http.MethodGet, path, lk.TokenPathPrefix + "other", nil, http.StatusUnauthorized, ""},
		{"no token", nil, http.MethodGet, path, "", nil, http.StatusUnauthorized, "auth-required:"},
		{"oversized body", &member, http.MethodPost, path, "", bytes.Repeat([]byte("x"), 1<<20+1), http.StatusRequestEntityTooLarge, ""},
	} {
		st, body := lkDo(t, r, a.u, a.method, a.path, a.tokenPath, a.body)
		if st != a.status || !strings.Contains(string(body), a.prefix) || strings.Contains(string(body), "participant_token") {
			t.Errorf("%s: %d %.200s, want %d %s", a.name, st, body, a.status, a.prefix)
		}
		if a.name == "wrong group" && string(body) != string(strangerBody) {
			t.Errorf("a group that does not exist answers %s, a stranger %s: an oracle", body, strangerBody)
		}
	}

	// LiveKit's webhook: a verified participant_joined publishes the
	// group's relay-signed 39004, read by a member; a forged one is 401.
	hookBody, _ := json.Marshal(map[string]any{"event": lk.ParticipantJoined, "room": map[string]string{"name": lk.RoomName("default", group)},
		"participant": map[string]string{"identity": c.Subject}})
	hookTok, err := lk.Sign(lk.Claims{Issuer: lkc.APIKey, NotBefore: time.Now().Unix(), Expires: time.Now().Add(time.Minute).Unix(), Sha256: lk.BodyHash(hookBody)}, lkc.APISecret)
	if err != nil {
		t.Fatal(err)
	}
	webhook := func(auth string, body []byte) (int, []byte) {
		return r.callWith(t, r.HTTPURL+lk.WebhookPath, auth, body)
	}
	if st, body := webhook(hookTok, bytes.Replace(hookBody, []byte(member.Pub), []byte(stranger.Pub), 1)); st != http.StatusUnauthorized {
		t.Errorf("forged webhook: %d %s", st, body)
	}
	if st, body := webhook(hookTok, hookBody); st != http.StatusNoContent {
		t.Fatalf("webhook: %d %s", st, body)
	}
	parts := ofKind(newBridge(t, r, member).query(map[string]any{"kinds": []int{39004}, "#d": []string{group}}), 39004)
	if len(parts) != 1 || parts[0].PubKey == member.Pub || len(parts[0].Tags) != 2 || parts[0].Tags[1][0] != "participant" || parts[0].Tags[1][1] != member.Pub {
		t.Errorf("39004 after the webhook: %+v", parts)
	}

	off := StartTest(t, Options{})
	if st, body := lkDo(t, off, nil, http.MethodGet, lk.DiscoveryPath, "", nil); st != http.StatusNotFound {
		t.Errorf("discovery without LiveKit: %d %s", st, body)
	}
	if st, body := lkDo(t, off, &member, http.MethodGet, path, "", nil); st != http.StatusForbidden || !strings.Contains(string(body), "not served") {
		t.Errorf("token without LiveKit: %d %s", st, body)
	}
}

package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	lk "github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestWelshmanReadsLiveKitRoomAsFlotilla: welshman 0.8.15 (Flotilla's
// library) has no helper of its own for NIP-29's LiveKit beyond
// readRoomMeta's `livekit` flag, so a member signed in by welshman's
// NIP-42 socket policy reads a private LiveKit group as a Flotilla room
// view would (nip29clients/rooms.mjs): readRoomMeta of the relay's 39000
// says livekit, and the relay-signed 39004 (d = the group) lists the
// member LiveKit's verified webhook said joined, and only that member.
func TestWelshmanReadsLiveKitRoomAsFlotilla(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "welshman LiveKit room test", map[string]string{
		"@welshman/net": "0.8.15", "@welshman/util": "0.8.15", "@welshman/signer": "0.8.15", "ws": "8.18.3",
	})
	lkc := lk.Config{URL: "wss://livekit.example", APIKey: "APIe2e", APISecret: "an-e2e-secret-of-thirty-two-chars!"}
	r := StartTest(t, Options{Env: map[string]string{"LIVEKIT_URL": lkc.URL, "LIVEKIT_API_KEY": lkc.APIKey, "LIVEKIT_API_SECRET": lkc.APISecret}})
	owner, member := testkit.NewKey(t), testkit.NewKey(t)
	group := testkit.ChannelID()
	bo := newBridge(t, r, owner)
	bo.accept(signed(t, owner, 9007, nostr.Tags{{"h", group}, {"name", "av room"}, {"visibility", "private"}}, ""))
	bo.accept(signed(t, owner, 9000, nostr.Tags{{"h", group}, {"p", member.Pub}}, ""))

	body, _ := json.Marshal(map[string]any{"event": lk.ParticipantJoined, "room": map[string]string{"name": lk.RoomName("default", group)},
		"participant": map[string]string{"identity": lk.Identity(member.Pub, []byte{1, 2, 3, 4})}})
	tok, err := lk.Sign(lk.Claims{Issuer: lkc.APIKey, NotBefore: time.Now().Unix(), Expires: time.Now().Add(time.Minute).Unix(), Sha256: lk.BodyHash(body)}, lkc.APISecret)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+lk.WebhookPath, bytes.NewReader(body))
	req.Header.Set("Authorization", tok)
	req.Header.Set("Content-Type", "application/webhook+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("webhook: %v %v", resp, err)
	}
	resp.Body.Close()

	var got struct {
		Meta *struct {
			H, Name, Pubkey    string
			Livekit, IsPrivate bool
		} `json:"meta"`
		Participants *struct {
			Pubkey, D    string
			Participants []string
		} `json:"participants"`
		Err string `json:"err"`
	}
	stderr := RunNode(t, node, dir, 2*time.Minute, &got, "rooms.mjs", r.WSURL, group, member.Secret)
	relay := r.App.Signer.PublicKey()
	switch {
	case got.Err != "" || got.Meta == nil:
		t.Fatalf("welshman read no 39000: %q (stderr %s)", got.Err, stderr)
	case !got.Meta.Livekit || got.Meta.H != group || got.Meta.Pubkey != relay || !got.Meta.IsPrivate:
		t.Errorf("readRoomMeta of the 39000: %+v, want livekit, private, h %s, by the relay", *got.Meta, group)
	}
	switch {
	case got.Participants == nil:
		t.Fatalf("welshman read no 39004 (stderr %s)", stderr)
	case got.Participants.Pubkey != relay || got.Participants.D != group || len(got.Participants.Participants) != 1 || got.Participants.Participants[0] != member.Pub:
		t.Errorf("39004 as welshman read it: %+v, want the relay's, d %s, listing %s", *got.Participants, group, member.Pub)
	}
}

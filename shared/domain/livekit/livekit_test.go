package livekit

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/authevent"
)

var cfg = Config{URL: "wss://lk.example", APIKey: "APIkey1", APISecret: "secret-of-at-least-32-characters!!"}

const pk = "6e468422dfb74a5738702a8823b9b28168abab8655faacb6853cd0ee15deee93"

// TestParticipantTokenClaims decodes and verifies the token the relay mints:
// its header, issuer, identity, room, grants, validity and signature.
func TestParticipantTokenClaims(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	id := Identity(pk, []byte{1, 2, 3, 4})
	tok, err := ParticipantToken(cfg, id, RoomName("c1", "g1"), now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	head, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]string
	if err := json.Unmarshal(head, &h); err != nil || h["alg"] != "HS256" || h["typ"] != "JWT" {
		t.Fatalf("header %s", head)
	}
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	video, _ := raw["video"].(map[string]any)
	for _, c := range []struct {
		name string
		got  any
		want any
	}{
		{"iss", raw["iss"], cfg.APIKey},
		{"sub", raw["sub"], pk + ":01020304"},
		{"sub's pubkey", PubkeyOf(raw["sub"].(string)), pk},
		{"nbf", raw["nbf"], float64(now.Unix())},
		{"exp", raw["exp"], float64(now.Add(TokenTTL).Unix())},
		{"video.room", video["room"], "c1:g1"},
		{"video.roomJoin", video["roomJoin"], true},
		{"video.canPublish", video["canPublish"], true},
		{"video.canSubscribe", video["canSubscribe"], true},
		{"no admin grant", video["roomAdmin"], nil},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, err := Verify(tok, cfg.APIKey, cfg.APISecret, now.Add(time.Hour)); err != nil {
		t.Errorf("own token does not verify: %v", err)
	}
	for _, c := range []struct {
		name   string
		token  string
		key    string
		secret string
		at     time.Time
		want   error
	}{
		{"wrong secret", tok, cfg.APIKey, "another-secret", now, ErrSignature},
		{"wrong key", tok, "other", cfg.APISecret, now, ErrIssuer},
		{"expired", tok, cfg.APIKey, cfg.APISecret, now.Add(TokenTTL + 2*authevent.MaxSkew), ErrExpired},
		{"not yet valid", tok, cfg.APIKey, cfg.APISecret, now.Add(-2 * authevent.MaxSkew), ErrExpired},
		{"tampered claims", parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(body), "c1:g1", "c1:g2", 1))) + "." + parts[2], cfg.APIKey, cfg.APISecret, now, ErrSignature},
		{"two parts", parts[0] + "." + parts[1], cfg.APIKey, cfg.APISecret, now, ErrMalformed},
	} {
		if _, err := Verify(c.token, c.key, c.secret, c.at); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func webhookToken(t *testing.T, secret string, body []byte, at time.Time) string {
	t.Helper()
	tok, err := Sign(Claims{Issuer: cfg.APIKey, NotBefore: at.Unix(), Expires: at.Add(10 * time.Minute).Unix(), Sha256: BodyHash(body)}, secret)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestVerifyWebhookRefusesForgeries: a webhook is accepted only with a
// token signed by the API secret, in force, whose sha256 is the body's.
func TestVerifyWebhookRefusesForgeries(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"event":"participant_joined","room":{"name":"c1:g1"},"participant":{"identity":"` + pk + `:ab"}}`)
	forged := []byte(strings.Replace(string(body), "g1", "g2", 1))
	for _, c := range []struct {
		name string
		auth string
		body []byte
		want error
	}{
		{"good", webhookToken(t, cfg.APISecret, body, now), body, nil},
		{"good with Bearer", "Bearer " + webhookToken(t, cfg.APISecret, body, now), body, nil},
		{"forged body", webhookToken(t, cfg.APISecret, body, now), forged, ErrBodyHash},
		{"wrong secret", webhookToken(t, "not-the-secret", body, now), body, ErrSignature},
		{"expired", webhookToken(t, cfg.APISecret, body, now.Add(-time.Hour)), body, ErrExpired},
		{"no header", "", body, ErrMalformed},
	} {
		if err := VerifyWebhook(cfg, c.auth, c.body, now); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	e, err := ParseWebhook(body)
	if err != nil || e.Event != ParticipantJoined || e.Room.Name != "c1:g1" || PubkeyOf(e.Participant.Identity) != pk {
		t.Fatalf("parsed %+v, %v", e, err)
	}
}

func TestRoomsAndIdentities(t *testing.T) {
	for _, c := range []struct {
		typ     string
		deleted bool
		want    bool
	}{{"stream", false, true}, {"forum", false, true}, {"dm", false, false}, {"system", false, false}, {"workflow", false, false}, {"stream", true, false}} {
		if got := Serves(c.typ, c.deleted); got != c.want {
			t.Errorf("Serves(%q, %v) = %v", c.typ, c.deleted, got)
		}
	}
	if c, g, ok := SplitRoom(RoomName("comm", "grp")); !ok || c != "comm" || g != "grp" {
		t.Errorf("SplitRoom: %q %q %v", c, g, ok)
	}
	for _, id := range []string{"", "short", strings.ToUpper(pk) + ":x", strings.Repeat("z", 64)} {
		if PubkeyOf(id) != "" {
			t.Errorf("PubkeyOf(%q) is a pubkey", id)
		}
	}
	if (Config{URL: "u", APIKey: "k"}).On() || !cfg.On() {
		t.Error("On")
	}
}

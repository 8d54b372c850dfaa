// Package livekit holds the pure rules of NIP-29's live audio/video rooms
// (nips 29.md, "Live audio/video (AV) spaces"): which groups have a room,
// the room's name and a participant's identity, the LiveKit participant
// access token the relay mints for a member (a JWT, HS256 with the API
// secret, as LiveKit's token format defines it), the check of a LiveKit
// webhook's signature, and the tags of the relay-signed 39004 that lists a
// room's participants. No I/O: shared/service/livekit runs them.
package livekit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/domain/authevent"

	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
)

// DiscoveryPath is the path a relay that serves LiveKit answers 204 on
// (nips 29.md); TokenPathPrefix + <group-id> is a group's token endpoint.
const (
	DiscoveryPath   = relayinfo.LiveKitDiscoveryPath
	TokenPathPrefix = DiscoveryPath + "/"
	// WebhookPath is where LiveKit posts its webhooks (the operator
	// configures it on the LiveKit server).
	WebhookPath = relayinfo.LiveKitWebhookPath
)

// Bounds.
const (
	// TokenTTL is how long a participant token may be used to join.
	TokenTTL = 6 * time.Hour
	// MaxWebhookBody is the largest webhook body read; LiveKit's are a few
	// KiB.
	MaxWebhookBody = 64 << 10
)

// Config is the relay's LiveKit server: its URL (wss://) and API key and
// secret. The zero value is LiveKit off.
type Config struct {
	URL, APIKey, APISecret string
}

// On reports whether LiveKit is configured.
func (c Config) On() bool { return c.URL != "" && c.APIKey != "" && c.APISecret != "" }

// Serves reports whether a channel of type channelType has a LiveKit room:
// the group kinds people talk in (stream and forum), not DMs, workflows or
// the system channel, and not a deleted one.
func Serves(channelType string, deleted bool) bool {
	return !deleted && (channelType == nip29.TypeStream || channelType == nip29.TypeForum)
}

// Tag is the 39000 tag that says a group has a LiveKit room (nips 29.md).
const Tag = "livekit"

// MetadataTag is the tag a group of channelType adds to its 39000 when the
// relay serves LiveKit (on); nil when it adds none.
func MetadataTag(on bool, channelType string) []string {
	if !on || !Serves(channelType, false) {
		return nil
	}
	return []string{Tag}
}

// RoomName is the LiveKit room of group in community: unique across the
// communities that share one LiveKit server.
func RoomName(community, group string) string { return community + ":" + group }

// SplitRoom is RoomName's inverse.
func SplitRoom(room string) (community, group string, ok bool) {
	return strings.Cut(room, ":")
}

// Identity is a participant's LiveKit identity: the member's lowercase hex
// pubkey, then ":" and a random suffix so one key may join more than once
// (nips 29.md).
func Identity(pubkey string, random []byte) string {
	return strings.ToLower(pubkey) + ":" + hex.EncodeToString(random)
}

// PubkeyOf is the pubkey an identity starts with, "" when it starts with
// none.
func PubkeyOf(identity string) string {
	if len(identity) < 64 {
		return ""
	}
	pk := identity[:64]
	if _, err := hex.DecodeString(pk); err != nil || strings.ToLower(pk) != pk {
		return ""
	}
	return pk
}

// VideoGrant is LiveKit's "video" claim, the part the relay grants.
type VideoGrant struct {
	Room         string `json:"room,omitempty"`
	RoomJoin     bool   `json:"roomJoin,omitempty"`
	CanPublish   *bool  `json:"canPublish,omitempty"`
	CanSubscribe *bool  `json:"canSubscribe,omitempty"`
}

// Claims are the claims of a LiveKit access token (participant tokens) or
// webhook token (Sha256).
type Claims struct {
	Issuer    string      `json:"iss"`
	Subject   string      `json:"sub,omitempty"`
	NotBefore int64       `json:"nbf"`
	Expires   int64       `json:"exp"`
	Name      string      `json:"name,omitempty"`
	Video     *VideoGrant `json:"video,omitempty"`
	Sha256    string      `json:"sha256,omitempty"`
}

var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// Sign encodes c as a JWT signed HS256 with secret.
func Sign(c Claims, secret string) (string, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("livekit: encode claims: %w", err)
	}
	signing := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(body)
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac(signing, secret)), nil
}

func mac(signing, secret string) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(signing))
	return h.Sum(nil)
}

// ParticipantToken mints the token that lets identity join room (publish
// and subscribe), valid from now for TokenTTL.
func ParticipantToken(cfg Config, identity, room string, now time.Time) (string, error) {
	yes := true
	return Sign(Claims{
		Issuer:    cfg.APIKey,
		Subject:   identity,
		NotBefore: now.Unix(),
		Expires:   now.Add(TokenTTL).Unix(),
		Video:     &VideoGrant{Room: room, RoomJoin: true, CanPublish: &yes, CanSubscribe: &yes},
	}, cfg.APISecret)
}

// Refusals of a token that does not verify.
var (
	ErrMalformed = errors.New("malformed token")
	ErrSignature = errors.New("bad signature")
	ErrIssuer    = errors.New("unknown issuer")
	ErrExpired   = errors.New("token expired or not yet valid")
	ErrBodyHash  = errors.New("body does not match the token's sha256")
)

// Verify checks token's HS256 signature with secret, its issuer and its
// validity at now (within authevent.MaxSkew, the one clock skew of the relay's auth checks), and returns its claims.
func Verify(token, apiKey, secret string, now time.Time) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, ErrMalformed
	}
	head, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return Claims{}, ErrMalformed
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(head, &h) != nil || h.Alg != "HS256" {
		return Claims{}, ErrMalformed
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Claims{}, ErrMalformed
	}
	if !hmac.Equal(sig, mac(parts[0]+"."+parts[1], secret)) {
		return Claims{}, ErrSignature
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return Claims{}, ErrMalformed
	}
	var c Claims
	if err := json.Unmarshal(body, &c); err != nil {
		return Claims{}, ErrMalformed
	}
	if c.Issuer != apiKey {
		return Claims{}, ErrIssuer
	}
	t := now.Unix()
	skew := int64(authevent.MaxSkew / time.Second)
	if c.Expires == 0 || t > c.Expires+skew || (c.NotBefore != 0 && t+skew < c.NotBefore) {
		return Claims{}, ErrExpired
	}
	return c, nil
}

// BodyHash is a webhook token's sha256 claim for body: the base64 of its
// SHA-256.
func BodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// VerifyWebhook checks a LiveKit webhook: its Authorization header is a
// token (optionally "Bearer "-prefixed) that verifies with the API secret
// and whose sha256 claim is body's.
func VerifyWebhook(cfg Config, authorization string, body []byte, now time.Time) error {
	token := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(authorization), "Bearer "))
	c, err := Verify(token, cfg.APIKey, cfg.APISecret, now)
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(c.Sha256), []byte(BodyHash(body))) {
		return ErrBodyHash
	}
	return nil
}

// Webhook events the relay acts on.
const (
	ParticipantJoined = "participant_joined"
	ParticipantLeft   = "participant_left"
)

// WebhookEvent is the part of LiveKit's webhook body the relay reads.
type WebhookEvent struct {
	Event string `json:"event"`
	Room  struct {
		Name string `json:"name"`
	} `json:"room"`
	Participant struct {
		Identity string `json:"identity"`
	} `json:"participant"`
}

// ParseWebhook decodes a verified webhook body.
func ParseWebhook(body []byte) (WebhookEvent, error) {
	var e WebhookEvent
	if err := json.Unmarshal(body, &e); err != nil {
		return WebhookEvent{}, fmt.Errorf("livekit: webhook body: %w", err)
	}
	return e, nil
}

// ParticipantsTags are the tags of a group's 39004: its d tag and one
// participant tag per pubkey (nips 29.md).
func ParticipantsTags(group string, pubkeys []string) [][]string {
	tags := [][]string{{"d", group}}
	for _, pk := range pubkeys {
		tags = append(tags, []string{"participant", pk})
	}
	return tags
}

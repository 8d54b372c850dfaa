// Package nip98 verifies NIP-98 HTTP auth: an "Authorization: Nostr <base64
// event>" header carrying a kind 27235 event bound to one request.
package nip98

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
)

// Kind is the NIP-98 HTTP auth kind.
const Kind = kinds.HTTPAuth

// MaxSkew is how far created_at may be from the relay's clock.
const MaxSkew = 60 * time.Second

// ReplayGuard records token ids across every instance; fresh is false for a
// token seen before in the community.
type ReplayGuard interface {
	// createdAt is the token's; a token made before the guard's storage last
	// restarted is never fresh (its record may have been lost in a crash).
	SeenNIP98(ctx context.Context, community, id string, createdAt, expiresAt int64) (fresh bool, err error)
}

// Verifier checks tokens.
type Verifier struct {
	Replay ReplayGuard
	Now    func() time.Time
	// Sigs checks the token's signature (nil: without remembering keys).
	Sigs *sigverify.Verifier
}

// Request is the part of an HTTP request a token is bound to.
type Request struct {
	Community     string // whose replay table the token is recorded in
	Authorization string // the header's value
	Method        string
	URL           string // scheme://host/path?query as the client addressed it
	Body          []byte
	// RequirePayload refuses a token without a payload tag (NIP-86 calls
	// must bind the body).
	RequirePayload bool
}

// Verify returns the authenticated pubkey. Every token problem is a
// *reject.Error with prefix auth-required (HTTP 401); other errors are
// internal (the replay table could not be reached).
func (v *Verifier) Verify(ctx context.Context, r Request) (string, error) {
	ev, err := Parse(r.Authorization)
	if err != nil {
		return "", err
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	if ev.Kind != Kind {
		return "", fail("auth event kind is %d, want %d", ev.Kind, Kind)
	}
	switch err := v.Sigs.Event(ev); err {
	case sigverify.ErrID:
		return "", fail("auth event id does not match its content")
	case sigverify.ErrSig:
		return "", fail("auth event signature does not verify")
	}
	skew := now().Sub(time.Unix(int64(ev.CreatedAt), 0))
	if skew > MaxSkew || skew < -MaxSkew {
		return "", fail("auth event created_at is %d s from the relay's clock; the limit is %d s", int64(skew.Seconds()), int64(MaxSkew.Seconds()))
	}
	u, ok := filter.TagValue(ev.Tags, "u")
	if !ok {
		return "", fail("auth event has no u tag")
	}
	if pu, err := url.Parse(u); err != nil || pu.User != nil || pu.Fragment != "" || strings.Contains(u, "#") {
		return "", fail("auth event u tag must be an absolute URL without user info or fragment")
	}
	if relayurl.Normalize(u) != relayurl.Normalize(r.URL) {
		return "", fail("auth event u tag %q does not match the request URL %q", u, r.URL)
	}
	m, ok := filter.TagValue(ev.Tags, "method")
	if !ok {
		return "", fail("auth event has no method tag")
	}
	if !strings.EqualFold(m, r.Method) {
		return "", fail("auth event method %q does not match %s", m, r.Method)
	}
	p, ok := filter.TagValue(ev.Tags, "payload")
	if !ok && r.RequirePayload {
		return "", fail("auth event has no payload tag; this request must bind its body")
	}
	if ok {
		sum := sha256.Sum256(r.Body)
		if !strings.EqualFold(p, hex.EncodeToString(sum[:])) {
			return "", fail("auth event payload hash does not match the request body")
		}
	}
	if v.Replay != nil {
		fresh, err := v.Replay.SeenNIP98(ctx, r.Community, ev.ID, int64(ev.CreatedAt), int64(ev.CreatedAt)+int64(2*MaxSkew/time.Second))
		if err != nil {
			return "", err
		}
		if !fresh {
			return "", fail("auth event %s was already used (or predates a relay restart); sign a new one", ev.ID)
		}
	}
	return ev.PubKey, nil
}

// Parse decodes the header value "Nostr <base64 event>".
func Parse(header string) (*nostr.Event, error) {
	if header == "" {
		return nil, fail("missing Authorization header (NIP-98: Nostr <base64 event>)")
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Nostr") {
		return nil, fail("Authorization must use the Nostr scheme (NIP-98)")
	}
	token = strings.TrimSpace(token)
	// Standard or URL alphabet, padded or not (blossom-client-sdk sends
	// unpadded base64url).
	var raw []byte
	err := errors.New("empty")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err = enc.DecodeString(token); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fail("Authorization token is not base64")
	}
	var ev nostr.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fail("Authorization token is not a JSON nostr event")
	}
	return &ev, nil
}

func fail(format string, args ...any) error {
	return reject.New(reject.AuthRequired, format, args...)
}

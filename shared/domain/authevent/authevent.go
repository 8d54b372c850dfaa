// Package authevent checks the signed events a client proves its key with:
// NIP-42's AUTH (kind 22242), NIP-98's HTTP auth (kind 27235) and
// Blossom's authorization (BUD-01, kind 24242). One checker applies the
// checks they share, in one order (kind, pubkey, id, signature, created_at
// against MaxSkew), then the binding of each protocol: NIP-42's challenge
// and relay URL, NIP-98's u, method and payload, BUD-01's expiration, t,
// x and server tags. Each protocol keeps its own prefix and wording.
package authevent

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
)

// MaxSkew is how far an auth event's created_at may be from the relay's
// clock: either way for NIP-42 and NIP-98, into the future for BUD-01
// (whose past is bounded by its expiration tag).
const MaxSkew = 60 * time.Second

// Checker checks auth events against one clock.
type Checker struct {
	// Sigs checks signatures (nil: without remembering keys).
	Sigs *sigverify.Verifier
	// Now is the relay's clock at the request.
	Now time.Time
}

// protocol is what differs between the three protocols in the checks they
// share: the kind, the prefix of a refusal, its wording, and whether an
// old event is refused by its created_at.
type protocol struct {
	kind      int
	prefix    reject.Prefix
	bothWays  bool // false: only a created_at in the future is refused
	wrongKind func(got, want int) string
	badID     string
	badSig    string
	skew      func(skew, limit int64) string
}

var (
	nip42 = protocol{
		kind: kinds.Auth, prefix: reject.Invalid, bothWays: true,
		wrongKind: func(got, want int) string { return fmt.Sprintf("AUTH needs a kind %d event, got kind %d", want, got) },
		badID:     "AUTH event id does not match its content",
		badSig:    "AUTH event signature is not valid",
		skew: func(skew, limit int64) string {
			return fmt.Sprintf("AUTH event created_at is %d s from the relay's clock; it must be within %d s", skew, limit)
		},
	}
	nip98 = protocol{
		kind: kinds.HTTPAuth, prefix: reject.AuthRequired, bothWays: true,
		wrongKind: func(got, want int) string { return fmt.Sprintf("auth event kind is %d, want %d", got, want) },
		badID:     "auth event id does not match its content",
		badSig:    "auth event signature does not verify",
		skew: func(skew, limit int64) string {
			return fmt.Sprintf("auth event created_at is %d s from the relay's clock; the limit is %d s", skew, limit)
		},
	}
	bud01 = protocol{
		kind: kinds.BlossomAuth, prefix: reject.AuthRequired,
		wrongKind: func(got, want int) string {
			return fmt.Sprintf("the authorization event's kind is %d, want %d", got, want)
		},
		badID:  "the authorization event's id does not match its content",
		badSig: "the authorization event is not signed by its pubkey",
		skew:   func(int64, int64) string { return "the authorization event's created_at is in the future" },
	}
)

// check applies the checks every protocol shares, in order: kind, id (a
// pubkey that is not 64 lowercase hex names no key and gets the id's
// refusal), signature, created_at within MaxSkew.
func (c Checker) check(p protocol, ev *nostr.Event) *reject.Error {
	if ev.Kind != p.kind {
		return reject.New(p.prefix, "%s", p.wrongKind(ev.Kind, p.kind))
	}
	err := sigverify.ErrID
	if eventcheck.LowerHex(ev.PubKey, 64) {
		err = c.Sigs.Event(ev)
	}
	switch err {
	case sigverify.ErrID:
		return reject.New(p.prefix, "%s", p.badID)
	case sigverify.ErrSig:
		return reject.New(p.prefix, "%s", p.badSig)
	}
	skew := c.Now.Sub(ev.CreatedAt.Time())
	if skew < -MaxSkew || p.bothWays && skew > MaxSkew {
		return reject.New(p.prefix, "%s", p.skew(int64(skew/time.Second), int64(MaxSkew/time.Second)))
	}
	return nil
}

// NIP42 checks an AUTH event against the connection it came on: the
// challenge the relay sent there and the URLs the connection addressed
// (normalized, relayurl.Normalize). Refusals are invalid:.
func (c Checker) NIP42(ev *nostr.Event, challenge string, relayURLs []string) *reject.Error {
	if rej := c.check(nip42, ev); rej != nil {
		return rej
	}
	if ch, _ := filter.TagValue(ev.Tags, "challenge"); ch != challenge {
		return reject.Invalidf("AUTH challenge tag does not match the challenge this relay sent on this connection")
	}
	relay, _ := filter.TagValue(ev.Tags, "relay")
	for _, u := range relayURLs {
		if relayurl.Normalize(relay) == u {
			return nil
		}
	}
	return reject.Invalidf("AUTH relay tag %q does not name this relay (%s)", clip(relay), strings.Join(relayURLs, " or "))
}

// HTTP is the request a NIP-98 token is bound to.
type HTTP struct {
	Method string
	URL    string // scheme://host/path?query as the client addressed it
	Body   []byte
	// RequirePayload refuses a token without a payload tag.
	RequirePayload bool
}

// NIP98 checks a kind 27235 event against the request it authorizes: its
// u tag names the request's URL, its method tag the method, its payload
// tag (required when r says so) the body's SHA-256. Refusals are
// auth-required:. Replays are the caller's to refuse (they need storage).
func (c Checker) NIP98(ev *nostr.Event, r HTTP) *reject.Error {
	if rej := c.check(nip98, ev); rej != nil {
		return rej
	}
	u, ok := filter.TagValue(ev.Tags, "u")
	if !ok {
		return authRequired("auth event has no u tag")
	}
	if pu, err := url.Parse(u); err != nil || pu.User != nil || pu.Fragment != "" || strings.Contains(u, "#") {
		return authRequired("auth event u tag must be an absolute URL without user info or fragment")
	}
	if relayurl.Normalize(u) != relayurl.Normalize(r.URL) {
		return authRequired("auth event u tag %q does not match the request URL %q", u, r.URL)
	}
	m, ok := filter.TagValue(ev.Tags, "method")
	if !ok {
		return authRequired("auth event has no method tag")
	}
	if !strings.EqualFold(m, r.Method) {
		return authRequired("auth event method %q does not match %s", m, r.Method)
	}
	p, ok := filter.TagValue(ev.Tags, "payload")
	if !ok && r.RequirePayload {
		return authRequired("auth event has no payload tag; this request must bind its body")
	}
	if ok {
		sum := sha256.Sum256(r.Body)
		if !strings.EqualFold(p, hex.EncodeToString(sum[:])) {
			return authRequired("auth event payload hash does not match the request body")
		}
	}
	return nil
}

// Blob is what one Blossom endpoint asks of an authorization event.
type Blob struct {
	// Verbs are the t values the endpoint accepts (upload: upload or media).
	Verbs []string
	// Hash, when set, must be named by one of the event's x tags.
	Hash string
	// HashOptional lets an event with no x tag at all stand for any hash
	// (BUD-06's HEAD /upload, which welshman's makeBlossomAuthEvent signs
	// without one and with the hash in X-SHA-256); one with x tags must
	// still name Hash.
	HashOptional bool
	// ServerSuffices lets a server tag naming this host stand in for the x
	// tag of Hash (BUD-01's get: one event for every blob of a server).
	ServerSuffices bool
	// Host is the hostname the request addressed: an event with server
	// tags must name it among them (one without is generic, as BUD-01
	// allows).
	Host string
}

// BUD01 applies BUD-01's checks to a kind 24242 event, in its order: kind,
// signature, created_at not in the future, expiration in the future, the
// t verb, then the endpoint's own: an x tag for its hash (none at all
// where the hash is optional), the server binding. Refusals are auth-required: and say which check failed.
func (c Checker) BUD01(ev *nostr.Event, b Blob) *reject.Error {
	if rej := c.check(bud01, ev); rej != nil {
		return rej
	}
	exp, ok := filter.TagValue(ev.Tags, "expiration")
	if !ok {
		return authRequired("the authorization event has no expiration tag")
	}
	at, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return authRequired("the authorization event's expiration is not a unix time")
	}
	if at <= c.Now.Unix() {
		return authRequired("the authorization event expired")
	}
	verb, _ := filter.TagValue(ev.Tags, "t")
	if !slices.Contains(b.Verbs, verb) {
		return authRequired("the authorization event's t tag is %q; this endpoint takes %s", verb, strings.Join(b.Verbs, " or "))
	}
	host := relayurl.Hostname(b.Host)
	namesHost := func(v string) bool { return serverHost(v) == host }
	noX := b.HashOptional && !hasTag(ev, "x", func(string) bool { return true })
	if b.Hash != "" && !noX && !hasTag(ev, "x", func(v string) bool { return v == b.Hash }) &&
		!(b.ServerSuffices && hasTag(ev, "server", namesHost)) {
		if b.ServerSuffices {
			return authRequired("the authorization event has no x tag for blob %s nor a server tag for %s", b.Hash, host)
		}
		return authRequired("the authorization event has no x tag for blob %s", b.Hash)
	}
	if hasTag(ev, "server", func(string) bool { return true }) && !hasTag(ev, "server", namesHost) {
		return authRequired("the authorization event is bound to other servers (server tags), not %s", host)
	}
	return nil
}

// serverHost is the hostname a server tag names (a URL or a bare domain)
// as relayurl.Hostname spells it.
func serverHost(v string) string {
	v = strings.TrimSpace(v)
	if strings.Contains(v, "://") {
		if u, err := url.Parse(v); err == nil {
			return relayurl.Hostname(u.Host)
		}
		return ""
	}
	h, _, _ := strings.Cut(v, "/")
	return relayurl.Hostname(h)
}

// Parse decodes an Authorization header's value, "Nostr <base64 event>"
// (NIP-98's; BUD-01 uses the same). Every problem is auth-required:.
func Parse(header string) (*nostr.Event, error) {
	if header == "" {
		return nil, authRequired("missing Authorization header (NIP-98: Nostr <base64 event>)")
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Nostr") {
		return nil, authRequired("Authorization must use the Nostr scheme (NIP-98)")
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
		return nil, authRequired("Authorization token is not base64")
	}
	var ev nostr.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, authRequired("Authorization token is not a JSON nostr event")
	}
	return &ev, nil
}

// authRequired is a NIP-98 or BUD-01 binding's refusal.
func authRequired(format string, args ...any) *reject.Error {
	return reject.New(reject.AuthRequired, format, args...)
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

func hasTag(ev *nostr.Event, name string, match func(string) bool) bool {
	for _, t := range ev.Tags {
		if len(t) >= 2 && t[0] == name && match(t[1]) {
			return true
		}
	}
	return false
}

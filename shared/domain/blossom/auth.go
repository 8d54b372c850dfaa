package blossom

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip98"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
)

// AuthKind is the Blossom authorization event's kind (BUD-01).
const AuthKind = 24242

// Verbs of an authorization event's t tag.
const (
	VerbGet    = "get"
	VerbUpload = "upload"
	VerbList   = "list"
	VerbDelete = "delete"
	VerbMedia  = "media" // BUD-05's /media, which Buzz's /media/upload also takes
)

// MaxAuthorization bounds the Authorization header a request may carry.
const MaxAuthorization = 16 << 10

// Need is what one endpoint asks of an authorization event.
type Need struct {
	// Verbs are the t values the endpoint accepts (upload: upload or media).
	Verbs []string
	// Hash, when set, must be named by one of the event's x tags (upload,
	// delete, get).
	Hash string
	// ServerSuffices lets a server tag naming this host stand in for the x
	// tag of Hash (BUD-01's get: one event for every blob of a server).
	ServerSuffices bool
	// Host is the hostname the request addressed: an event with server
	// tags must name it among them (an event without one is generic, as
	// BUD-01 allows).
	Host string
	// Now is the relay's clock.
	Now time.Time
}

// ParseAuthorization decodes an Authorization header: "Nostr " and a
// base64 (standard or URL alphabet, padded or not) JSON event. Every
// problem is auth-required (401).
func ParseAuthorization(header string) (*nostr.Event, error) {
	if header == "" {
		return nil, authFail("this endpoint needs an Authorization header: Nostr <base64 kind %d event>", AuthKind)
	}
	if len(header) > MaxAuthorization {
		return nil, authFail("the Authorization header is larger than %d bytes", MaxAuthorization)
	}
	ev, err := nip98.Parse(header)
	if err != nil {
		return nil, authFail("the Authorization header must be Nostr <base64 kind %d event>", AuthKind)
	}
	return ev, nil
}

// CheckAuth applies BUD-01's checks to a kind 24242 event, in its order:
// kind, signature, created_at in the past, expiration in the future, the t
// verb, then the endpoint's own: an x tag for its hash, the server
// binding. It returns the authorized pubkey. Every refusal is a 401 with
// auth-required: and says which check failed.
func CheckAuth(ev *nostr.Event, n Need, sigs *sigverify.Verifier) (string, error) {
	if ev.Kind != AuthKind {
		return "", authFail("the authorization event's kind is %d, want %d", ev.Kind, AuthKind)
	}
	switch sigs.Event(ev) {
	case sigverify.ErrID:
		return "", authFail("the authorization event's id does not match its content")
	case sigverify.ErrSig:
		return "", authFail("the authorization event is not signed by its pubkey")
	}
	if created := time.Unix(int64(ev.CreatedAt), 0); created.After(n.Now.Add(nip98.MaxSkew)) {
		return "", authFail("the authorization event's created_at is in the future")
	}
	exp, ok := tagValue(ev, "expiration")
	if !ok {
		return "", authFail("the authorization event has no expiration tag")
	}
	at, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return "", authFail("the authorization event's expiration is not a unix time")
	}
	if at <= n.Now.Unix() {
		return "", authFail("the authorization event expired")
	}
	verb, _ := tagValue(ev, "t")
	if !contains(n.Verbs, verb) {
		return "", authFail("the authorization event's t tag is %q; this endpoint takes %s", verb, strings.Join(n.Verbs, " or "))
	}
	namesHost := func(v string) bool { return ServerHost(v) == hostname(n.Host) }
	if n.Hash != "" && !hasTag(ev, "x", func(v string) bool { return v == n.Hash }) &&
		!(n.ServerSuffices && hasTag(ev, "server", namesHost)) {
		if n.ServerSuffices {
			return "", authFail("the authorization event has no x tag for blob %s nor a server tag for %s", n.Hash, hostname(n.Host))
		}
		return "", authFail("the authorization event has no x tag for blob %s", n.Hash)
	}
	if hasTag(ev, "server", func(string) bool { return true }) && !hasTag(ev, "server", namesHost) {
		return "", authFail("the authorization event is bound to other servers (server tags), not %s", hostname(n.Host))
	}
	return ev.PubKey, nil
}

// ServerHost is the hostname a server tag names (a URL or a bare domain)
// as relayurl.Hostname spells it.
func ServerHost(v string) string {
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

func hostname(host string) string { return relayurl.Hostname(host) }

func authFail(format string, args ...any) error {
	return Refuse(http.StatusUnauthorized, reject.AuthRequired, format, args...)
}

func tagValue(ev *nostr.Event, name string) (string, bool) {
	for _, t := range ev.Tags {
		if len(t) >= 2 && t[0] == name {
			return t[1], true
		}
	}
	return "", false
}

func hasTag(ev *nostr.Event, name string, match func(string) bool) bool {
	for _, t := range ev.Tags {
		if len(t) >= 2 && t[0] == name && match(t[1]) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

package blossom

import (
	"net/http"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/authevent"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
)

// AuthKind is the Blossom authorization event's kind (BUD-01).
const AuthKind = kinds.BlossomAuth

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

// Need is what one endpoint asks of an authorization event
// (authevent.Blob says each field), and the relay's clock.
type Need struct {
	Verbs          []string
	Hash           string
	HashOptional   bool
	ServerSuffices bool
	Host           string
	Now            time.Time
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
	ev, err := authevent.Parse(header)
	if err != nil {
		return nil, authFail("the Authorization header must be Nostr <base64 kind %d event>", AuthKind)
	}
	return ev, nil
}

// CheckAuth applies BUD-01's checks to a kind 24242 event
// (authevent.Checker.BUD01: kind, signature, created_at not in the future,
// expiration in the future, the t verb, an x tag for the endpoint's hash,
// the server binding). It returns the authorized pubkey. Every refusal is
// a 401 with auth-required: and says which check failed.
func CheckAuth(ev *nostr.Event, n Need, sigs *sigverify.Verifier) (string, error) {
	check := authevent.Checker{Sigs: sigs, Now: n.Now}
	if rej := check.BUD01(ev, authevent.Blob{Verbs: n.Verbs, Hash: n.Hash, HashOptional: n.HashOptional, ServerSuffices: n.ServerSuffices, Host: n.Host}); rej != nil {
		return "", &Refusal{Status: http.StatusUnauthorized, Err: rej}
	}
	return ev.PubKey, nil
}

func authFail(format string, args ...any) error {
	return Refuse(http.StatusUnauthorized, reject.AuthRequired, format, args...)
}

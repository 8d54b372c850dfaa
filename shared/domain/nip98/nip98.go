// Package nip98 verifies NIP-98 HTTP auth: an "Authorization: Nostr <base64
// event>" header carrying a kind 27235 event bound to one request, checked
// by shared/domain/authevent and recorded against replay.
package nip98

import (
	"context"
	"time"

	"github.com/buzzrelay/relay/shared/domain/authevent"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
)

// ReplayGuard records token ids across every instance; fresh is false for a
// token seen before in the community.
type ReplayGuard interface {
	// The record is durable before it answers: a replay stays refused
	// across a crash or restart of its storage.
	NIP98SeenInsert(ctx context.Context, community, id string, expiresAt int64) (fresh bool, err error)
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
	ev, err := authevent.Parse(r.Authorization)
	if err != nil {
		return "", err
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	check := authevent.Checker{Sigs: v.Sigs, Now: now()}
	if rej := check.NIP98(ev, authevent.HTTP{Method: r.Method, URL: r.URL, Body: r.Body, RequirePayload: r.RequirePayload}); rej != nil {
		return "", rej
	}
	if v.Replay != nil {
		// A token is fresh for MaxSkew either side of its created_at.
		fresh, err := v.Replay.NIP98SeenInsert(ctx, r.Community, ev.ID, int64(ev.CreatedAt)+int64(2*authevent.MaxSkew/time.Second))
		if err != nil {
			return "", err
		}
		if !fresh {
			return "", reject.New(reject.AuthRequired, "auth event %s was already used; sign a new one", ev.ID)
		}
	}
	return ev.PubKey, nil
}

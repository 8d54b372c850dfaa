package testkit

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/signer"
)

// Key is a test identity.
type Key struct {
	Secret, Pub string
}

// NewKey generates a fresh identity.
func NewKey(t testing.TB) Key {
	t.Helper()
	sk := nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	return Key{Secret: sk, Pub: pk}
}

// Sign signs ev as k (the signer go-nostr's Relay.Auth asks for).
func (k Key) Sign(ev *nostr.Event) error { return ev.Sign(k.Secret) }

// Event signs an event of kind with tags and content, created now.
func (k Key) Event(t testing.TB, kind int, content string, tags ...nostr.Tag) *nostr.Event {
	t.Helper()
	return k.EventAt(t, time.Now(), kind, content, tags...)
}

// EventAt signs an event created at ts.
func (k Key) EventAt(t testing.TB, ts time.Time, kind int, content string, tags ...nostr.Tag) *nostr.Event {
	t.Helper()
	ev := &nostr.Event{Kind: kind, CreatedAt: nostr.Timestamp(ts.Unix()), Tags: nostr.Tags(tags), Content: content}
	if ev.Tags == nil {
		ev.Tags = nostr.Tags{}
	}
	if err := k.Sign(ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// ChannelID returns a new lowercase UUID.
func ChannelID() string { return uuid.NewString() }

// Token builds a NIP-98 Authorization header value for method and url,
// with the body's payload hash when body is not nil. A nonce tag makes
// every token unique, so two requests in one second never share a token
// id (the relay accepts each token once).
func (k Key) Token(t testing.TB, method, url string, body []byte, at time.Time) string {
	t.Helper()
	tags := []nostr.Tag{{"u", url}, {"method", method}}
	if body != nil {
		sum := sha256.Sum256(body)
		tags = append(tags, nostr.Tag{"payload", hex.EncodeToString(sum[:])})
	}
	tags = append(tags, nostr.Tag{"nonce", randomHex(8)})
	ev := k.EventAt(t, at, kinds.HTTPAuth, "", tags...)
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return "Nostr " + base64.StdEncoding.EncodeToString(b)
}

// RelayKey is a fresh relay signing key.
func RelayKey(t testing.TB) *signer.Key {
	t.Helper()
	k, err := signer.FromHex(nostr.GeneratePrivateKey())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

package nip98

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/nbd-wtf/go-nostr"
)

// Signer signs an event (shared/domain/signer.Signer).
type Signer interface {
	Sign(ctx context.Context, ev *nostr.Event) error
}

// Header is the Authorization value "Nostr <base64 event>" the relay sends
// for one request of its own (a NIP-PL wake to the push gateway): a kind
// 27235 event bound to method, url and the body's SHA-256, created at now,
// signed by sg. Verify accepts what it builds.
func Header(ctx context.Context, sg Signer, method, url string, body []byte, now int64) (string, error) {
	sum := sha256.Sum256(body)
	ev := &nostr.Event{
		Kind:      kinds.HTTPAuth,
		CreatedAt: nostr.Timestamp(now),
		Tags:      nostr.Tags{{"u", url}, {"method", method}, {"payload", hex.EncodeToString(sum[:])}},
	}
	if err := sg.Sign(ctx, ev); err != nil {
		return "", fmt.Errorf("nip98: sign: %w", err)
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return "", fmt.Errorf("nip98: encode: %w", err)
	}
	return "Nostr " + base64.StdEncoding.EncodeToString(raw), nil
}

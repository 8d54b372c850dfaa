package workflow

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"

	"github.com/google/uuid"
)

// NewWebhookSecret is a webhook workflow's secret: a random UUID v4 (122
// bits), as Buzz mints it. It is returned once, in the OK of the 30620
// that created the workflow, and kept only as its SHA-256.
func NewWebhookSecret() string { return uuid.NewString() }

// NewApprovalToken is an approval gate's token: a random UUID v4. The
// relay keeps and lists its SHA-256 (approval_ref); a 46030/46031 names
// that hash in its d tag.
func NewApprovalToken() string { return uuid.NewString() }

// Hash is the SHA-256 of a secret or token.
func Hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// HashHex is Hash in lowercase hex (an approval_ref).
func HashHex(s string) string { return hex.EncodeToString(Hash(s)) }

// SecretMatches compares a presented webhook secret with the stored hash
// in constant time.
func SecretMatches(presented string, stored []byte) bool {
	if presented == "" || len(stored) != sha256.Size {
		return false
	}
	return subtle.ConstantTimeCompare(Hash(presented), stored) == 1
}

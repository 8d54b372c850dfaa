package wire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// Challenges derives each connection's NIP-42 challenge from its id: a
// keyed MAC, the same on every instance and in every function that holds
// the key (ws-message answers AUTH with it, ws-push greets with it at
// $connect), stored nowhere, unpredictable to anyone without the key. It is
// the one challenge rule, so a challenge pushed at connect and one sent in reply
// to a first message are the same string, and either verifies a later
// AUTH.
type Challenges struct{ key []byte }

// NewChallenges derives challenges under key (shared/wiring/app derives it
// from the relay key).
func NewChallenges(key []byte) Challenges { return Challenges{key: key} }

// processKey keys the challenges of a Challenges without a key (the zero
// value): they then match no other process's, which is only right for a
// relay that runs in one process (unit tests), and are still unknown to
// any client.
var processKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}()

// For is connection id's challenge: 32 hex digits.
func (c Challenges) For(id string) string {
	key := c.key
	if len(key) == 0 {
		key = processKey
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("nip42-challenge\x00" + id))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Zero reports whether c has no key of its own (the zero value).
func (c Challenges) Zero() bool { return len(c.key) == 0 }

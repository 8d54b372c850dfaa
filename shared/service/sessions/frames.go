package sessions

import (
	"encoding/json"
	"strings"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// The relay-to-client frames a session is posted outside the answer to
// its own message: stored and live events of a subscription, and the
// CLOSED that ends one.

// EventMessage is ["EVENT", sub, raw] (raw is the event's JSON).
func EventMessage(sub, raw string) []byte {
	s, _ := json.Marshal(sub)
	var b strings.Builder
	b.Grow(len(raw) + len(s) + 12)
	b.WriteString(`["EVENT",`)
	b.Write(s)
	b.WriteByte(',')
	b.WriteString(raw)
	b.WriteByte(']')
	return []byte(b.String())
}

// ClosedMessage is ["CLOSED", sub, why] with why's NIP-01 prefixed text.
func ClosedMessage(sub string, why *reject.Error) []byte {
	b, _ := json.Marshal([]string{"CLOSED", sub, why.Error()})
	return b
}

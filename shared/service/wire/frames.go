package wire

import (
	"encoding/json"
	"strings"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// The relay-to-client frames a session is posted outside the answer to
// its own message: stored and live events of a subscription, the CLOSED
// that ends one, the NIP-42 challenge (also pushed at connect) and the
// liveness frame.

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

// AuthMessage is ["AUTH", challenge], the NIP-42 challenge: pushed once
// the connection opens (Pusher.Greet) and sent again, the same string, in
// reply to a first message that found it unauthenticated.
func AuthMessage(challenge string) []byte {
	b, _ := json.Marshal([]string{"AUTH", challenge})
	return b
}

// LivenessSub is the subscription id of the liveness frame: one no client
// opens (go-nostr's ids start with a number and a colon, nostr-tools'
// with "sub:", NDK's and Buzz's are random or prefixed by their use).
const LivenessSub = "relay-liveness"

// Liveness is the frame every open connection gets while idle
// (Pusher.Tick): ["EOSE", LivenessSub], an end of stored events for a
// subscription the client never opened. It is a text frame because API
// Gateway's @connections API cannot send WebSocket pings. Read from each
// library's message handling (docs/architecture.md, "Greeting and
// liveness"): nostr-tools, go-nostr, NDK, welshman and the Buzz desktop
// app look an EOSE's subscription up and drop one they do not hold, with
// nothing shown; each counts it as traffic (Buzz's stall watchdog, NDK's
// keepalive, welshman's inactivity timer). A NOTICE would be shown or
// logged by some, an unknown verb logged as an error by strict parsers,
// and an AUTH re-sent makes NDK and nostr-tools sign in again.
var Liveness = []byte(`["EOSE","` + LivenessSub + `"]`)

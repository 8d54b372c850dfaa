package wsrelay

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/relay"
)

// Verbs of client messages.
const (
	VerbEvent = "EVENT"
	VerbReq   = "REQ"
	VerbClose = "CLOSE"
	VerbCount = "COUNT"
	VerbAuth  = "AUTH"
	// NIP-77 negentropy.
	VerbNegOpen  = "NEG-OPEN"
	VerbNegMsg   = "NEG-MSG"
	VerbNegClose = "NEG-CLOSE"
	VerbNegErr   = "NEG-ERR"
)

// VerbNIPs are the client messages this codec serves and the NIP each
// belongs to: NIP-11's supported_nips lists every one of them
// (TestSupportedNIPsListEveryVerbServed).
var VerbNIPs = map[string]int{
	VerbEvent: 1, VerbReq: 1, VerbClose: 1, VerbAuth: 42, VerbCount: 45,
	VerbNegOpen: 77, VerbNegMsg: 77, VerbNegClose: 77,
}

// MaxSubIDLength is the longest subscription id accepted (NIP-11
// max_subid_length).
const MaxSubIDLength = relayinfo.MaxSubIDLength

// Message is one parsed client message.
type Message struct {
	Verb    string
	SubID   string         // REQ, CLOSE, COUNT
	Filters []nostr.Filter // REQ, COUNT
	// ThreadWindows are a REQ's filters as sent, instead of Filters, when
	// one of them asks for a NIP-CW thread window (relay.IsThreadWindow):
	// go-nostr's filter would drop the extension and serve a plain read.
	ThreadWindows []json.RawMessage
	Event         *nostr.Event // EVENT, AUTH
	// EventID is the id of a malformed EVENT/AUTH when it could be read, so
	// the OK false names it.
	EventID string
	// Negentropy is a NEG-OPEN's or NEG-MSG's negentropy message (hex);
	// a NEG-OPEN's filter is Filters[0].
	Negentropy string
}

// ParseError is a message that cannot be served; Verb and IDs say how to
// answer it (OK for EVENT/AUTH with an id, CLOSED for REQ/COUNT with a
// subscription id, NOTICE otherwise).
type ParseError struct {
	Verb    string
	SubID   string
	EventID string
	Err     *reject.Error
}

func (e *ParseError) Error() string { return e.Err.Error() }

// panicReason answers a message that made a decoder panic.
const panicReason = "message could not be decoded"

// Parse reads one client message. It never panics; every failure is a
// *ParseError with an invalid: reason.
func Parse(data []byte) (msg *Message, err error) {
	defer func() {
		if r := recover(); r != nil { // a decoder bug must not kill the handler
			msg, err = nil, &ParseError{Err: reject.Invalidf(panicReason)}
		}
	}()
	if len(data) > relayinfo.MaxMessageLength {
		return nil, &ParseError{Err: reject.Invalidf("message is %d bytes, the limit is %d", len(data), relayinfo.MaxMessageLength)}
	}
	msg, err = parse(data)
	if err != nil {
		return nil, err
	}
	// One rule on both front doors: text that is not UTF-8 is refused, not
	// repaired (the HTTP bridge checks its body the same way).
	if err := eventcheck.UTF8("message", data); err != nil {
		r, _ := reject.As(err)
		return nil, &ParseError{Verb: msg.Verb, SubID: msg.SubID, EventID: msg.EventID, Err: r}
	}
	return msg, nil
}

func parse(data []byte) (*Message, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		return nil, &ParseError{Err: reject.Invalidf("message must be a JSON array like [\"REQ\", ...]: %s", jsonProblem(err))}
	}
	if len(parts) == 0 {
		return nil, &ParseError{Err: reject.Invalidf("message is an empty array; the first element must be a verb")}
	}
	var verb string
	if err := json.Unmarshal(parts[0], &verb); err != nil {
		return nil, &ParseError{Err: reject.Invalidf("the first element must be a verb string (EVENT, REQ, CLOSE, COUNT, AUTH)")}
	}
	switch verb {
	case VerbEvent, VerbAuth:
		return parseEvent(verb, parts)
	case VerbReq, VerbCount:
		return parseReq(verb, parts)
	case VerbNegOpen, VerbNegMsg, VerbNegClose:
		return parseNeg(verb, parts)
	case VerbClose:
		if len(parts) != 2 {
			return nil, &ParseError{Verb: verb, Err: reject.Invalidf("CLOSE takes one subscription id")}
		}
		sub, perr := subID(verb, parts[1])
		if perr != nil {
			return nil, perr
		}
		return &Message{Verb: verb, SubID: sub}, nil
	default:
		return nil, &ParseError{Err: reject.Invalidf("unknown verb %q; this relay speaks %s", clip(verb), spoken)}
	}
}

// parseNeg reads a NIP-77 message: ["NEG-OPEN", sub, filter, msg],
// ["NEG-MSG", sub, msg] or ["NEG-CLOSE", sub].
func parseNeg(verb string, parts []json.RawMessage) (*Message, error) {
	want := map[string]int{VerbNegOpen: 4, VerbNegMsg: 3, VerbNegClose: 2}[verb]
	shape := map[string]string{VerbNegOpen: "a subscription id, a filter and a message",
		VerbNegMsg: "a subscription id and a message", VerbNegClose: "a subscription id"}[verb]
	if len(parts) < 2 {
		return nil, &ParseError{Verb: verb, Err: reject.Invalidf("%s takes %s", verb, shape)}
	}
	sub, perr := subID(verb, parts[1])
	if perr != nil {
		return nil, perr
	}
	fail := func(r *reject.Error) error { return &ParseError{Verb: verb, SubID: sub, Err: r} }
	if len(parts) != want {
		return nil, fail(reject.Invalidf("%s takes %s", verb, shape))
	}
	msg := &Message{Verb: verb, SubID: sub}
	if verb == VerbNegClose {
		return msg, nil
	}
	if err := json.Unmarshal(parts[len(parts)-1], &msg.Negentropy); err != nil {
		return nil, fail(reject.Invalidf("the negentropy message must be a hex string"))
	}
	if verb == VerbNegOpen {
		raw := bytes.TrimSpace(parts[2])
		if len(raw) > 0 && raw[0] == '[' {
			// @nostr-dev-kit/sync 1.0.0 (NDKSync) sends its filters as an
			// array: one filter in an array is that filter; a reconciliation
			// is of one filter (NIP-77).
			var list []json.RawMessage
			if err := json.Unmarshal(raw, &list); err != nil || len(list) != 1 {
				return nil, fail(reject.Invalidf("NEG-OPEN reconciles one filter: a JSON object (or an array of exactly one)"))
			}
			raw = bytes.TrimSpace(list[0])
		}
		if len(raw) == 0 || raw[0] != '{' {
			return nil, fail(reject.Invalidf("the filter must be a JSON object"))
		}
		var f nostr.Filter
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fail(reject.Invalidf("filter: %s", jsonProblem(err)))
		}
		msg.Filters = []nostr.Filter{clean(f)}
	}
	return msg, nil
}

// spoken lists the verbs of VerbNIPs for the unknown-verb refusal.
var spoken = func() string {
	vs := make([]string, 0, len(VerbNIPs))
	for v := range VerbNIPs {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return strings.Join(vs, ", ")
}()

func parseEvent(verb string, parts []json.RawMessage) (*Message, error) {
	if len(parts) != 2 {
		return nil, &ParseError{Verb: verb, Err: reject.Invalidf("%s takes exactly one event", verb)}
	}
	raw := bytes.TrimSpace(parts[1])
	if len(raw) == 0 || raw[0] != '{' {
		return nil, &ParseError{Verb: verb, Err: reject.Invalidf("%s needs an event object", verb)}
	}
	var ev nostr.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		var probe struct {
			ID any `json:"id"`
		}
		_ = json.Unmarshal(raw, &probe)
		id, _ := probe.ID.(string)
		if !eventcheck.LowerHex(id, 64) {
			id = ""
		}
		return nil, &ParseError{Verb: verb, EventID: id, Err: reject.Invalidf("event is not a valid nostr event: %s", jsonProblem(err))}
	}
	return &Message{Verb: verb, Event: &ev, EventID: ev.ID}, nil
}

func parseReq(verb string, parts []json.RawMessage) (*Message, error) {
	if len(parts) < 2 {
		return nil, &ParseError{Verb: verb, Err: reject.Invalidf("%s needs a subscription id and at least one filter", verb)}
	}
	sub, perr := subID(verb, parts[1])
	if perr != nil {
		return nil, perr
	}
	fail := func(r *reject.Error) error { return &ParseError{Verb: verb, SubID: sub, Err: r} }
	if len(parts) < 3 {
		return nil, fail(reject.Invalidf("%s needs at least one filter", verb))
	}
	if n := len(parts) - 2; n > relayinfo.MaxFilters {
		return nil, fail(reject.Invalidf("%d filters, the limit is %d per %s", n, relayinfo.MaxFilters, verb))
	}
	filters := make([]nostr.Filter, 0, len(parts)-2)
	windows := false
	for i, raw := range parts[2:] {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			return nil, fail(reject.Invalidf("filter %d must be a JSON object", i))
		}
		windows = windows || verb == VerbReq && relay.IsThreadWindow(raw)
		var f nostr.Filter
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fail(reject.Invalidf("filter %d: %s", i, jsonProblem(err)))
		}
		filters = append(filters, clean(f))
	}
	if windows {
		return &Message{Verb: verb, SubID: sub, ThreadWindows: parts[2:]}, nil
	}
	return &Message{Verb: verb, SubID: sub, Filters: filters}, nil
}

// clean drops what the read engine ignores (tag names that are not one
// letter) and lowercases hex lists and #h channel ids, so live matching
// sees the same filter.
func clean(f nostr.Filter) nostr.Filter {
	for k := range f.Tags {
		if len(k) != 1 || !isLetter(k[0]) {
			delete(f.Tags, k)
		}
	}
	filter.Channels(f.Tags["h"])
	if len(f.Tags) == 0 {
		f.Tags = nil
	}
	for i := range f.IDs {
		f.IDs[i] = strings.ToLower(f.IDs[i])
	}
	for i := range f.Authors {
		f.Authors[i] = strings.ToLower(f.Authors[i])
	}
	return f
}

func subID(verb string, raw json.RawMessage) (string, *ParseError) {
	var sub string
	if err := json.Unmarshal(raw, &sub); err != nil {
		return "", &ParseError{Verb: verb, Err: reject.Invalidf("subscription id must be a string")}
	}
	if sub == "" || len(sub) > MaxSubIDLength {
		return "", &ParseError{Verb: verb, Err: reject.Invalidf("subscription id must be 1 to %d characters", MaxSubIDLength)}
	}
	return sub, nil
}

// jsonProblem describes a decoding error without echoing the input.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "malformed JSON"
	case errors.As(err, &te):
		if te.Field != "" {
			return "field " + clip(te.Field) + " has the wrong type"
		}
		return "a value has the wrong type"
	}
	return "malformed JSON"
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

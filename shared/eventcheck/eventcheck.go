// Package eventcheck decides whether a client-submitted event is well formed
// and acceptable before any database work: shape, id, signature, clock skew,
// size, and the list of kinds this relay accepts.
package eventcheck

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/reject"
)

// Limits of the reference relay.
const (
	MaxSkew       = 900 * time.Second
	MaxContentLen = 256 * 1024
	MaxTags       = 2000
)

// accepted lists every kind a client may submit (README.md documents it). Anything else is refused
// with "restricted: unknown event kind".
var accepted = map[int]string{
	0:     "profile metadata",
	1:     "short text note",
	3:     "follow list",
	5:     "deletion (NIP-09)",
	7:     "reaction",
	9:     "chat message",
	10:    "threaded reply (NIP-29, deprecated)",
	11:    "thread / forum post",
	12:    "threaded reply (NIP-29, deprecated)",
	9000:  "put user",
	9001:  "remove user",
	9002:  "edit channel metadata",
	9005:  "delete event (moderation)",
	9007:  "create channel",
	9008:  "delete channel",
	9021:  "join request",
	9022:  "leave request",
	10009: "simple groups list",
	30023: "long-form article",
	1059:  "gift wrap (NIP-59)",
	40003: "message edit",
}

// Deletion reports whether kind deletes other events: NIP-09's 5 and
// NIP-29's 9005 delete-event.
func Deletion(kind int) bool { return kind == 5 || kind == 9005 }

// Ephemeral kinds (NIP-01: 20000-29999) are delivered live and never
// stored. 22242 is in the range but is the AUTH event (RelayOnly).
func Ephemeral(kind int) bool { return kind >= 20000 && kind < 30000 && !RelayOnly(kind) }

// KindGiftWrap is NIP-59's gift wrap: signed by a throwaway key, readable
// only by its p recipient, never searchable.
const KindGiftWrap = 1059

// GiftWrapMaxAge is how far in the past a gift wrap's created_at may be:
// NIP-59 randomizes it up to two days back, so NIP-17 clients send such
// timestamps; the future limit is MaxSkew as for every kind.
const GiftWrapMaxAge = 2*24*time.Hour + MaxSkew

// RecipientOnly are the kinds only the keys their p tags name may read:
// membership notifications (44100/44101) and gift wraps.
var RecipientOnly = []int{44100, 44101, KindGiftWrap}

// AnyAuthor reports whether kind is signed by a key other than the sender's
// own (a gift wrap's throwaway key), so its pubkey need not be the
// authenticated key.
func AnyAuthor(kind int) bool { return kind == KindGiftWrap }

// RelayOnly kinds are signed by the relay itself and never accepted from clients.
func RelayOnly(kind int) bool {
	switch kind {
	case 39000, 39001, 39002, 39003, 39005, 39006, 44100, 44101, 22242:
		return true
	}
	return false
}

// Check validates ev against now. The returned error, if any, is a
// *reject.Error with its NIP-01 prefix.
func Check(ev *nostr.Event, now time.Time) error {
	if !isHex(ev.ID, 64) {
		return reject.Invalidf("id must be 64 lowercase hex characters")
	}
	if !isHex(ev.PubKey, 64) {
		return reject.Invalidf("pubkey must be 64 lowercase hex characters")
	}
	if !isHex(ev.Sig, 128) {
		return reject.Invalidf("sig must be 128 lowercase hex characters")
	}
	if ev.Kind < 0 || ev.Kind > 65535 {
		return reject.Invalidf("kind %d is out of range", ev.Kind)
	}
	if len(ev.Content) > MaxContentLen {
		return reject.Invalidf("content is %d bytes, the limit is %d", len(ev.Content), MaxContentLen)
	}
	if len(ev.Tags) > MaxTags {
		return reject.Invalidf("%d tags, the limit is %d", len(ev.Tags), MaxTags)
	}
	if err := Text("content", ev.Content); err != nil {
		return err
	}
	for i, t := range ev.Tags {
		if len(t) == 0 {
			return reject.Invalidf("tag %d is empty", i)
		}
		for _, v := range t {
			if err := Text("tag "+strconv.Itoa(i), v); err != nil {
				return err
			}
		}
	}
	if !ev.CheckID() {
		return reject.Invalidf("id does not match the event's serialized hash")
	}
	if ok, err := ev.CheckSignature(); err != nil || !ok {
		return reject.Invalidf("signature does not verify")
	}
	skew := now.Sub(time.Unix(int64(ev.CreatedAt), 0))
	limit := MaxSkew
	if ev.Kind == KindGiftWrap && skew > 0 {
		limit = GiftWrapMaxAge
	}
	if skew > limit || skew < -limit {
		return reject.Invalidf("created_at is %d s from the relay's clock; the limit is %d s", int64(skew.Seconds()), int64(limit.Seconds()))
	}
	if RelayOnly(ev.Kind) {
		if ev.Kind == 22242 {
			return reject.Invalidf("kind 22242 is an AUTH event: send it with AUTH, it is never stored")
		}
		return reject.Restrictedf("kind %d is signed only by the relay", ev.Kind)
	}
	if _, ok := accepted[ev.Kind]; !ok && !Ephemeral(ev.Kind) {
		return reject.Restrictedf("unknown event kind %d", ev.Kind)
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Text is the one rule for client text the relay stores or matches (event
// content, tag names and values, filter values): valid UTF-8 without NUL,
// which Postgres text cannot hold. what names the field in the refusal.
func Text(what, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return reject.Invalidf("%s contains a NUL character", what)
	}
	if !utf8.ValidString(s) {
		return reject.Invalidf("%s is not valid UTF-8", what)
	}
	return nil
}

// UTF8 refuses a client message or body that is not valid UTF-8 as a whole,
// before JSON decoding could replace the bad bytes on one path and keep them
// on another.
func UTF8(what string, b []byte) error {
	if !utf8.Valid(b) {
		return reject.Invalidf("%s is not valid UTF-8", what)
	}
	return nil
}

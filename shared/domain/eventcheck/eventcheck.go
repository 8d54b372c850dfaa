// Package eventcheck decides whether a client-submitted event is well formed
// and acceptable before any database work: shape, id, signature, clock skew,
// size (limits from relayinfo), a NIP-40 expiration still ahead, and whether a client may send the kind
// (shared/domain/kinds).
package eventcheck

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/groupid"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip40"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
)

// Limits, from relayinfo (the numbers NIP-11 advertises).
const (
	MaxSkew       = relayinfo.CreatedAtWindow * time.Second
	MaxContentLen = relayinfo.MaxContentLength
	MaxTags       = relayinfo.MaxEventTags
	// GiftWrapMaxAge is how far in the past a gift wrap's created_at may be:
	// NIP-59 randomizes it up to two days back, so NIP-17 clients send such
	// timestamps; the future limit is MaxSkew as for every kind.
	GiftWrapMaxAge = relayinfo.GiftWrapMaxAge * time.Second
)

// Check validates ev against now, its signature through sigs (nil: checked
// without remembering the key). The returned error, if any, is a
// *reject.Error with its NIP-01 prefix.
func Check(ev *nostr.Event, now time.Time, sigs *sigverify.Verifier) error {
	if !LowerHex(ev.ID, 64) {
		return reject.Invalidf("id must be 64 lowercase hex characters")
	}
	if !LowerHex(ev.PubKey, 64) {
		return reject.Invalidf("pubkey must be 64 lowercase hex characters")
	}
	if !LowerHex(ev.Sig, 128) {
		return reject.Invalidf("sig must be 128 lowercase hex characters")
	}
	if ev.Kind < 0 || ev.Kind > kinds.Max {
		return reject.Invalidf("kind %d is out of range", ev.Kind)
	}
	if len(ev.Content) > MaxContentLen {
		return reject.Invalidf("content is %d bytes, the limit is %d", len(ev.Content), MaxContentLen)
	}
	if len(ev.Tags) > MaxTags {
		return reject.Invalidf("%d tags, the limit is %d", len(ev.Tags), MaxTags)
	}
	if b, err := ev.MarshalJSON(); err != nil || len(b) > relayinfo.MaxEventBytes {
		return reject.Invalidf("the event takes %d bytes as JSON; the limit is %d, the largest one WebSocket message delivers to every subscriber", len(b), relayinfo.MaxEventBytes)
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
	if err := sigs.Event(ev); err != nil {
		return reject.Invalidf("%v", err)
	}
	skew := now.Sub(time.Unix(int64(ev.CreatedAt), 0))
	limit := MaxSkew
	if ev.Kind == kinds.GiftWrap && skew > 0 {
		limit = GiftWrapMaxAge
	}
	if skew > limit || skew < -limit {
		return reject.Invalidf("created_at is %d s from the relay's clock; the limit is %d s", int64(skew.Seconds()), int64(limit.Seconds()))
	}
	if err := nip40.Check(ev.Tags, now.Unix()); err != nil {
		return err
	}
	if ev.Kind == kinds.Auth {
		return reject.Invalidf("kind %d is an AUTH event: send it with AUTH, it is never stored", kinds.Auth)
	}
	if kinds.RelayOnly(ev.Kind) {
		return reject.Restrictedf("kind %d is signed only by the relay", ev.Kind)
	}
	if missing, ok := kinds.NeedsEngine(ev.Kind); ok {
		return reject.Restrictedf("kind %d needs %s, which this relay does not run", ev.Kind, missing)
	}
	h, inGroup := filter.TagValue(ev.Tags, "h")
	if inGroup && !kinds.Personal(ev.Kind) && !groupid.Valid(h) {
		return reject.Invalidf("h tag %q is not a group id (%s)", groupid.Clip(h), groupid.Rule)
	}
	if !kinds.Accepted(ev.Kind) {
		// NIP-29: a group may take any kind (the kinds table's default row).
		if _, ok := kinds.InGroup(ev.Kind); !ok || !inGroup {
			return reject.Restrictedf("unknown event kind %d", ev.Kind)
		}
	}
	if ev.Kind == kinds.Comment {
		return comment(ev.Tags)
	}
	return nil
}

// comment checks a NIP-22 kind 1111: its root scope (E, A or I) with the
// root's kind (K), and its parent (e, a or i) with the parent's kind (k).
func comment(tags nostr.Tags) error {
	has := func(names ...string) bool {
		for _, t := range tags {
			if len(t) >= 2 && t[1] != "" && slices.Contains(names, t[0]) {
				return true
			}
		}
		return false
	}
	if !has("E", "A", "I") || !has("K") {
		return reject.Invalidf("a kind 1111 comment needs its root tags: E, A or I, and K (NIP-22)")
	}
	if !has("e", "a", "i") || !has("k") {
		return reject.Invalidf("a kind 1111 comment needs its parent tags: e, a or i, and k (NIP-22)")
	}
	return nil
}

// LowerHex reports whether s is n lowercase hex characters: the form
// NIP-01 requires of an event's id, pubkey and sig, and of the event ids
// and keys the relay reads out of tags.
func LowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
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

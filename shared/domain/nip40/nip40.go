// Package nip40 is NIP-40 event expiration, pure: the one reading of an
// event's expiration tag (Expiration), when a stored or delivered event is
// past it (Expired), and the ingest rule (Check): an expiration that is not
// unix seconds, or is already past, is refused with invalid:. The store
// keeps the parsed value beside the event (events.expires_at,
// migrations/018), every read predicate leaves out what is past it, and a
// scheduled sweep (shared/service/expiry) deletes it.
package nip40

import (
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Tag is the name of the expiration tag.
const Tag = "expiration"

// Expiration returns the value of tags' first expiration tag as unix
// seconds; ok is false when there is none. err (invalid:) when the value
// is not a positive decimal integer.
func Expiration(tags nostr.Tags) (at int64, ok bool, err error) {
	for _, t := range tags {
		if len(t) < 1 || t[0] != Tag {
			continue
		}
		if len(t) < 2 {
			return 0, true, reject.Invalidf("the expiration tag has no value (unix seconds)")
		}
		at, err := strconv.ParseInt(t[1], 10, 64)
		if err != nil || at <= 0 {
			return 0, true, reject.Invalidf("expiration %q is not unix seconds", clip(t[1]))
		}
		return at, true, nil
	}
	return 0, false, nil
}

// Expired reports whether an event with tags is past its expiration at
// now (unix seconds): NIP-40's "expired" is now at or after the value. An
// event without a well-formed expiration never expires (ingest refuses a
// malformed one, so only a stored event of an earlier version has one).
func Expired(tags nostr.Tags, now int64) bool {
	at, ok, err := Expiration(tags)
	return ok && err == nil && at <= now
}

// Check is the ingest rule: an event's expiration, when it has one, is
// well formed and still ahead of now (unix seconds). An event already
// expired is refused rather than stored for nobody.
func Check(tags nostr.Tags, now int64) error {
	at, ok, err := Expiration(tags)
	if err != nil || !ok {
		return err
	}
	if at <= now {
		return reject.Invalidf("event expired at %d (NIP-40), the relay's clock is %d", at, now)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

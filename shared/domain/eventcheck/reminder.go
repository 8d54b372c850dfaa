package eventcheck

import (
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// NIP-ER (block/buzz docs/nips/NIP-ER.md): a kind 30300 reminder carries
// a public not_before tag, the time it falls due.
const (
	// NotBeforeTag names the reminder's due time.
	NotBeforeTag = "not_before"
	// MaxNotBefore is the largest not_before NIP-ER allows (2^53 - 1: a
	// value every client parses exactly).
	MaxNotBefore = 1<<53 - 1
)

// Reminder checks the tags of a NIP-ER reminder (kind 30300) as NIP-ER asks
// a supporting relay to: exactly one non-empty d tag; at most one
// not_before, a decimal of ASCII digits without sign, space, point or
// leading zero (but "0") up to MaxNotBefore, else "malformed not_before";
// with both not_before and a NIP-40 expiration, the expiration after it,
// else "expiration before not_before". A not_before in the future is
// never a refusal: a reminder falls due later by design.
func Reminder(tags nostr.Tags) error {
	var ds, notBefore []string
	expiration, hasExpiration := "", false
	for _, t := range tags {
		if len(t) == 0 {
			continue
		}
		v := ""
		if len(t) >= 2 {
			v = t[1]
		}
		switch t[0] {
		case "d":
			ds = append(ds, v)
		case NotBeforeTag:
			if len(t) < 2 {
				return reject.Invalidf("malformed not_before")
			}
			notBefore = append(notBefore, v)
		case "expiration":
			if !hasExpiration {
				expiration, hasExpiration = v, true
			}
		}
	}
	if len(ds) != 1 || ds[0] == "" {
		return reject.Invalidf("a reminder (kind 30300) needs exactly one non-empty d tag, this one has %d", len(ds))
	}
	if len(notBefore) == 0 {
		return nil
	}
	due, ok := NotBefore(notBefore[0])
	if len(notBefore) > 1 || !ok {
		return reject.Invalidf("malformed not_before")
	}
	if hasExpiration {
		if exp, err := strconv.ParseInt(expiration, 10, 64); err == nil && exp <= due {
			return reject.Invalidf("expiration before not_before")
		}
	}
	return nil
}

// NotBefore parses a not_before value in NIP-ER's grammar: ASCII digits,
// no leading zero except "0" itself, at most MaxNotBefore.
func NotBefore(v string) (int64, bool) {
	if v == "" || len(v) > 16 || v[0] == '0' && len(v) > 1 {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > MaxNotBefore {
		return 0, false
	}
	return n, true
}

package relay

import (
	"slices"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
)

// # REQs that end at EOSE
//
// A REQ whose filters no later write can add to is answered and ended at
// EOSE: it is never stored, so it counts against no live-subscription
// limit (relayinfo.MaxSubscriptions, MaxSubscriptionsPerKey), and no
// burst of them is refused, whenever the client CLOSEs them. These are
// the bursts real clients send at once: welshman's id fetch after a
// NIP-77 sync (diff.js, 100 ids a REQ), NDK's and nostr-tools' fetches by
// id, and history pages (an until older than any new event may be). A
// live REQ is counted from its store on and refused at once past a limit
// (no invocation waits for room another one would make).

// EndsAtEOSE reports whether nothing written after now can match filters
// (every filter names its events by id, or ends before the write window,
// EndsBeforeWrites), so a REQ of them ends at its EOSE.
func EndsAtEOSE(filters []nostr.Filter, now time.Time) bool {
	return len(filters) > 0 && !slices.ContainsFunc(filters, func(f nostr.Filter) bool {
		return len(f.IDs) == 0 && !EndsBeforeWrites(f, now)
	})
}

// EndsBeforeWrites reports whether f's until is older than any event the
// relay may still accept at now (eventcheck: created_at at most
// relayinfo.CreatedAtWindow in the past, a gift wrap's at most
// relayinfo.GiftWrapMaxAge): no later write can match f, exactly.
func EndsBeforeWrites(f nostr.Filter, now time.Time) bool {
	if f.Until == nil {
		return false
	}
	oldest := now.Unix() - relayinfo.CreatedAtWindow
	if len(f.Kinds) == 0 || slices.Contains(f.Kinds, kinds.GiftWrap) {
		oldest = now.Unix() - relayinfo.GiftWrapMaxAge
	}
	return int64(*f.Until) < oldest
}

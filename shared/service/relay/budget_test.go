package relay_test

import (
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/relay"
)

// Issue 51: one REQ's answer is at most relayinfo.MaxREQEvents events
// across its filters, each filter cut to its share and no more.
func TestShareREQLimit(t *testing.T) {
	lim := func(ls ...int) []nostr.Filter {
		fs := make([]nostr.Filter, len(ls))
		for i, l := range ls {
			switch {
			case l < 0: // no limit
			case l == 0:
				fs[i].LimitZero = true
			default:
				fs[i].Limit = l
			}
		}
		return fs
	}
	for _, tc := range []struct {
		name string
		in   []nostr.Filter
		want []int // each filter's limit after (0 with LimitZero: none read)
	}{
		{"one filter keeps max_limit", lim(-1), []int{0}},
		{"ten unbounded filters get 100 each", lim(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1), []int{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}},
		{"small ones keep theirs", lim(500, 1, 1, 1, 1, 1, 1, 1, 1, 1), []int{500, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"the level fills what small ones leave", lim(10, -1, -1), []int{10, 495, 495}},
		{"the remainder goes one each", lim(-1, -1, -1), []int{334, 333, 333}},
		{"limit 0 reads nothing and is left", lim(0, -1, -1), []int{0, 500, 500}},
		{"clamped limits above max_limit", lim(5000, 5000), []int{500, 500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := relay.ShareREQLimit(tc.in, relayinfo.MaxREQEvents)
			total := 0
			for i, f := range out {
				got := f.Limit
				if len(tc.want) == 1 && !f.LimitZero && f.Limit == 0 {
					got = 0 // untouched, no limit
				}
				if got != tc.want[i] {
					t.Errorf("filter %d: limit %d, want %d (%+v)", i, got, tc.want[i], out)
				}
				switch {
				case f.LimitZero:
				case f.Limit == 0:
					total += relayinfo.DefaultLimit
				default:
					total += min(f.Limit, relayinfo.MaxLimit)
				}
			}
			if total > relayinfo.MaxREQEvents {
				t.Errorf("%d events in all, over %d", total, relayinfo.MaxREQEvents)
			}
			if len(tc.in) > 0 && &out[0] == &tc.in[0] && total > relayinfo.MaxREQEvents {
				t.Error("filters changed in place")
			}
		})
	}
}

// A REQ naming its events by id is one-shot (issue 56): never counted
// against the live-subscription limits. (EndsAtEOSE's ids-only half.)
func TestIDsOnly(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	id := []string{"aa"}
	for _, tc := range []struct {
		fs   []nostr.Filter
		want bool
	}{
		{nil, false},
		{[]nostr.Filter{{IDs: id}}, true},
		{[]nostr.Filter{{IDs: id}, {IDs: id, Kinds: []int{9}}}, true},
		{[]nostr.Filter{{IDs: id}, {Kinds: []int{9}}}, false},
	} {
		if got := relay.EndsAtEOSE(tc.fs, now); got != tc.want {
			t.Errorf("EndsAtEOSE(%+v) = %v", tc.fs, got)
		}
	}
}

// A REQ that no later write can add to ends at its EOSE (issue 56):
// ids-only, or every filter's until older than the write window (a gift
// wrap's, two days more, wherever kind 1059 may match).
func TestEndsAtEOSE(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ts := func(ago int64) *nostr.Timestamp { u := nostr.Timestamp(now.Unix() - ago); return &u }
	old, recent := ts(relayinfo.CreatedAtWindow+1), ts(relayinfo.CreatedAtWindow)
	wrapOld := ts(relayinfo.GiftWrapMaxAge + 1)
	for _, tc := range []struct {
		name string
		fs   []nostr.Filter
		want bool
	}{
		{"none", nil, false},
		{"ids", []nostr.Filter{{IDs: []string{"aa"}}}, true},
		{"live", []nostr.Filter{{Kinds: []int{9}}}, false},
		{"until past the window", []nostr.Filter{{Kinds: []int{9}, Until: old}}, true},
		{"until at the window's edge", []nostr.Filter{{Kinds: []int{9}, Until: recent}}, false},
		{"until in the future", []nostr.Filter{{Kinds: []int{9}, Until: ts(-60)}}, false},
		{"one live filter beside", []nostr.Filter{{Kinds: []int{9}, Until: old}, {Kinds: []int{7}}}, false},
		{"ids beside an old page", []nostr.Filter{{IDs: []string{"aa"}}, {Kinds: []int{7}, Until: old}}, true},
		{"gift wraps reach two days back", []nostr.Filter{{Kinds: []int{1059}, Until: old}}, false},
		{"any kind reaches two days back", []nostr.Filter{{Until: old}}, false},
		{"gift wraps past two days", []nostr.Filter{{Kinds: []int{1059}, Until: wrapOld}}, true},
	} {
		if got := relay.EndsAtEOSE(tc.fs, now); got != tc.want {
			t.Errorf("%s: EndsAtEOSE = %v", tc.name, got)
		}
	}
}

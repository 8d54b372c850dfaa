package relay

import (
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
)

// ShareREQLimit returns filters with their limits lowered so that the
// stored events they may return add up to at most total
// (relayinfo.MaxREQEvents for a WebSocket REQ): each filter's limit (its
// own, clamped to relayinfo.MaxLimit, or relayinfo.DefaultLimit when it
// has none) is cut to a common level, the highest that fits, and what
// that leaves of total goes one each to the filters cut, in order. A
// filter asking for less than its share keeps its limit, so one filter
// with limit 500 beside nine with limit 1 is untouched, while ten filters
// without a limit get 100 each. Filters with limit 0 read nothing and
// are left alone. filters is not changed.
func ShareREQLimit(filters []nostr.Filter, total int) []nostr.Filter {
	limits := make([]int, len(filters))
	sum := 0
	for i, f := range filters {
		limits[i] = effectiveLimit(f)
		sum += limits[i]
	}
	if sum <= total || total <= 0 {
		return filters
	}
	// The level: the highest L with sum(min(limit, L)) <= total.
	sorted := slices.Clone(limits)
	slices.Sort(sorted)
	level, used, left := 0, 0, len(sorted)
	for _, l := range sorted {
		if l == 0 {
			left--
			continue
		}
		if used+l*left > total {
			break
		}
		used += l
		left--
		level = l
	}
	if left > 0 {
		level = (total - used) / left
	}
	out := slices.Clone(filters)
	spare := total
	for i := range out {
		spare -= min(limits[i], level)
	}
	for i := range out {
		if limits[i] == 0 || limits[i] <= level {
			continue
		}
		out[i].Limit = level
		if spare > 0 {
			out[i].Limit++
			spare--
		}
		out[i].LimitZero = out[i].Limit == 0
	}
	return out
}

// effectiveLimit is how many stored events f may return: 0 for limit 0,
// else its limit clamped to MaxLimit, DefaultLimit without one.
func effectiveLimit(f nostr.Filter) int {
	switch {
	case f.LimitZero:
		return 0
	case f.Limit <= 0:
		return relayinfo.DefaultLimit
	}
	return min(f.Limit, relayinfo.MaxLimit)
}

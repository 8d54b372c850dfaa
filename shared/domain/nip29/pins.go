package nip29

import (
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// MaxPins is the most events a group's pin list (a 9010, its 39005) holds.
const MaxPins = 50

// ParsePins reads a 9010: the group (its h tag) and the ordered e/a tags
// that become the group's pin list, each reduced to its name and value
// (e lower-cased). No pin is an empty list: everything unpinned. Any
// other tag is not a pin and is left out.
func ParsePins(ev *nostr.Event) (group string, pins nostr.Tags, err error) {
	group, ok := ChannelTag(ev.Tags)
	if !ok || group == "" {
		return "", nil, reject.Invalidf("kind %d needs an h tag naming the group", ev.Kind)
	}
	seen := map[string]bool{}
	for _, t := range ev.Tags {
		if len(t) == 0 || (t[0] != "e" && t[0] != "a") {
			continue
		}
		if len(t) < 2 {
			return "", nil, reject.Invalidf("pin tag %q has no value", t[0])
		}
		v := t[1]
		if t[0] == "e" {
			if v, ok = filter.Hex64(v); !ok {
				return "", nil, reject.Invalidf("pinned e %q is not a 64-hex event id", t[1])
			}
		} else if !address(v) {
			return "", nil, reject.Invalidf("pinned a %q is not <kind>:<64-hex pubkey>:<d>", v)
		}
		if seen[t[0]+v] {
			return "", nil, reject.Invalidf("%s %s is pinned twice", t[0], v)
		}
		seen[t[0]+v] = true
		if len(pins) == MaxPins {
			return "", nil, reject.Invalidf("at most %d pins", MaxPins)
		}
		pins = append(pins, nostr.Tag{t[0], v})
	}
	return group, pins, nil
}

// address reports whether v is a NIP-01 address of an addressable event:
// <kind>:<pubkey, 64 lower-case hex>:<d>.
func address(v string) bool {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 {
		return false
	}
	k, err := strconv.Atoi(parts[0])
	if err != nil || !kinds.InAddressableRange(k) {
		return false
	}
	pk, ok := filter.Hex64(parts[1])
	return ok && pk == parts[1]
}

// PinsTags are the tags of group's relay-signed 39005: its d, then the pins
// in the 9010's order.
func PinsTags(group string, pins nostr.Tags) nostr.Tags {
	return append(nostr.Tags{{"d", group}}, pins...)
}

package fanout

import (
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
	// Imported as rule: audience.go names the (channel, reader) pair access.
)

// liveFilter is one stored REQ filter prepared for matching: the same
// filter.Filter REQ and COUNT read through, so live delivery means what the
// stored read means (#h is the event's stored channel, not its h tag).
type liveFilter struct {
	f     filter.Filter
	named []string // channels this filter names (NIP-CL)
}

func newLiveFilter(nf nostr.Filter) liveFilter {
	f := filter.FromNostr(nf)
	return liveFilter{f: f, named: access.Named(&f)}
}

// matches reports whether ev, stored in channel, matches the filter. limit
// does not apply to live events.
func (lf *liveFilter) matches(ev *nostr.Event, channel string) bool { return lf.f.Matches(ev, channel) }

func (lf *liveFilter) names(channel string) bool { return slices.Contains(lf.named, channel) }

// mayRead applies the access rule to ev, stored in channel ("" outside any;
// system when a system channel), for reader through this filter. readable
// is store.ChannelsCheckReadable's answer (access.Reaches) for each (channel, reader),
// meta store.ChannelsCheckMetadataReadable's (access.MetadataReaches), which the
// channel-state kinds follow (access.MayReadKind).
func (lf *liveFilter) mayRead(ev *nostr.Event, channel string, system bool, reader string, readable, meta map[records.ReadPair]bool) bool {
	inChannel := channel != ""
	reach := readable
	if kinds.ChannelState(ev.Kind) {
		reach = meta
	}
	channelReadable := inChannel && reach[records.ReadPair{Channel: channel, Reader: reader}] && access.Shows(system, lf.names(channel))
	return access.MaySee(ev, reader, inChannel, channelReadable)
}

package fanout

// The audience of a delivery: the subscriptions shared/service/sessions
// stored, read for matching (never written here).

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// candidate is a live subscription that may match an event.
type candidate struct {
	connection, sub, pubkey string
	raw                     string // its filters' JSON, decoded by decode
	filters                 []liveFilter
	named                   []string
	// claimsUntil: until then (unix s) each stored event is claimed for
	// it before it is sent (session.Subscription.ClaimsUntil); claim: it
	// is claimed whatever the time (a catch-up's).
	claimsUntil int64
	claim       bool
}

func candidatesOf(subs []session.Subscription, err error) ([]candidate, error) {
	if err != nil {
		return nil, fmt.Errorf("fanout: %w", err)
	}
	out := make([]candidate, len(subs))
	for i, s := range subs {
		out[i] = candidate{connection: s.Connection, sub: s.Sub, pubkey: s.Pubkey, raw: s.Filters, claimsUntil: s.ClaimsUntil}
	}
	return out, nil
}

// decode parses the filters of every candidate. Dispatch to the fan-out
// function needs only their keys, so only delivery decodes.
func decode(cands []candidate) error {
	for i := range cands {
		c := &cands[i]
		if c.filters != nil {
			continue
		}
		var fs []nostr.Filter
		if err := json.Unmarshal([]byte(c.raw), &fs); err != nil {
			return fmt.Errorf("fanout: decode filters of %s/%s: %w", c.connection, c.sub, err)
		}
		c.filters = make([]liveFilter, 0, len(fs))
		for _, f := range fs {
			lf := newLiveFilter(f)
			c.filters = append(c.filters, lf)
			c.named = append(c.named, lf.named...)
		}
	}
	return nil
}

// pins reports whether one of the subscription's filters names channel.
func (c *candidate) pins(channel string) bool { return slices.Contains(c.named, channel) }

// subscriptions returns the live subscriptions of community among keys ([connection,
// sub] pairs); a closed one is absent.
func (f *Fanout) subscriptions(ctx context.Context, community string, keys [][2]string) ([]candidate, error) {
	return candidatesOf(f.Sessions.SubscriptionsByKey(ctx, community, keys))
}

// audienceRange loads the audience of channels stored up to cutoff whose
// connections are in (after, through] (store.AudienceListRange).
func (f *Fanout) audienceRange(ctx context.Context, community string, channels []string, cutoff int64, after, through string) ([]candidate, error) {
	return candidatesOf(f.Sessions.AudienceRange(ctx, session.AudienceRangeParams{Community: community, Channels: channels,
		Cutoff: cutoff, After: after, Through: through}))
}

// audienceBounds splits the connections of the audience of channels into
// runs of per (store.AudienceListBounds).
func (f *Fanout) audienceBounds(ctx context.Context, community string, channels []string, per int) ([]string, error) {
	return f.Sessions.AudienceBounds(ctx, community, channels, per)
}

// readable answers, for each pair, whether reader may read channel now
// (store.ChannelsCheckReadable: access.Reaches for all pairs at once; match.go applies
// the rest of the access rule per filter).
func (f *Fanout) readable(ctx context.Context, community string, pairs []records.ReadPair) (map[records.ReadPair]bool, error) {
	return f.Store.ChannelsCheckReadable(ctx, community, pairs)
}

// ephemeral is what delivery needs about an ephemeral event, which is
// never stored: its own h tag names its channel, d says whether that is a
// system channel.
func ephemeral(d *store.Deliveries, ev *nostr.Event, raw string) store.Delivered {
	ch, _ := nip29.ChannelTag(ev.Tags)
	return store.Delivered{Raw: raw, Channel: ch, System: d.System[ch]}
}

// audienceAfterCommit is the audience of items, read from the session
// store after the commit: the subscriptions stored up to cutoff (taken as the commit returned; 0: taken now, after the
// commit), the whole audience read once; more than InlineMax connections
// is the fan-out function's to split (over).
func (f *Fanout) audienceAfterCommit(ctx context.Context, community string, items []*item, cutoff int64) (cands []candidate, _ int64, over bool, err error) {
	if cutoff == 0 {
		if cutoff, err = f.Cutoff(ctx); err != nil {
			return nil, 0, false, err
		}
	}
	cands, err = f.audienceRange(ctx, community, channelsOf(items), cutoff, "", maxConnectionID)
	if err != nil {
		return nil, cutoff, false, err
	}
	conns := map[string]bool{}
	for _, c := range cands {
		conns[c.connection] = true
	}
	if len(conns) > f.inlineMax() && f.Async != nil {
		return nil, cutoff, true, nil
	}
	return cands, cutoff, false, nil
}

// maxConnectionID is above every connection id (AudienceRange's whole
// range).
const maxConnectionID = "\U0010FFFF"

// channelsOf are the channels of items, each once.
func channelsOf(items []*item) []string {
	var channels []string
	for _, it := range items {
		if it.channel != "" && !slices.Contains(channels, it.channel) {
			channels = append(channels, it.channel)
		}
	}
	return channels
}

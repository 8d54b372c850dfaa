package fanout

import (
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/access/accesstest"
	"github.com/buzzrelay/relay/shared/domain/records"
)

func TestLiveFilterMatchesChannelNotTag(t *testing.T) {
	reaction := &nostr.Event{Kind: 7, Tags: nostr.Tags{{"e", "target"}}, CreatedAt: 10}
	f := newLiveFilter(nostr.Filter{Kinds: []int{7, 9}, Tags: nostr.TagMap{"h": {"c"}}})
	if !f.matches(reaction, "c") {
		t.Fatal("a reaction stored in channel c must match #h:[c] without an h tag")
	}
	if f.matches(reaction, "other") || f.matches(reaction, "") {
		t.Fatal("#h must match the stored channel only")
	}
	since := nostr.Timestamp(20)
	sf := newLiveFilter(nostr.Filter{Since: &since})
	if sf.matches(reaction, "c") {
		t.Fatal("since must apply to live events")
	}
	s := newLiveFilter(nostr.Filter{Search: "Hello World"})
	if !s.matches(&nostr.Event{Content: "world, hello!"}, "") || s.matches(&nostr.Event{Content: "hello"}, "") {
		t.Fatal("search must need every word")
	}
	named := newLiveFilter(nostr.Filter{Kinds: []int{39000}, Tags: nostr.TagMap{"d": {"sys"}}})
	plain := newLiveFilter(nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"d": {"sys"}}})
	if !named.names("sys") || plain.names("sys") {
		t.Fatal("#d names a channel only on channel-state kinds")
	}
}

// Live delivery decides what a subscriber sees by the access case table
// (shared/domain/access/testdata/cases.json): the event matches the case's filter,
// and with store.ChannelsCheckReadable's answer for the pair (access.Reaches) and
// store.ChannelsCheckMetadataReadable's (access.MetadataReaches; the SQL of both runs the
// same table in shared/postgres/store) mayRead is the case's see.
func TestLiveDeliveryAccessCases(t *testing.T) {
	table, err := accesstest.Load("../../domain/access/testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	const channel = "5d0c3d0e-2f41-4b8e-8f5a-9b2a1c3d4e5f"
	author := nostr.GeneratePrivateKey()
	readerSK := nostr.GeneratePrivateKey()
	reader, _ := nostr.GetPublicKey(readerSK)
	other, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	for _, c := range table.Cases {
		t.Run(c.Name, func(t *testing.T) {
			nf, err := c.NostrFilter(channel)
			if err != nil {
				t.Fatal(err)
			}
			lf := newLiveFilter(nf)
			ev, err := c.Event(channel, c.SignedBy(author, readerSK), reader, other, 1_790_000_000)
			if err != nil {
				t.Fatal(err)
			}
			ch, m := c.Rule()
			stored := ""
			if c.Channel != nil {
				stored = channel
			}
			readable := map[records.ReadPair]bool{{Channel: channel, Reader: reader}: access.Reaches(ch, m)}
			meta := map[records.ReadPair]bool{{Channel: channel, Reader: reader}: access.MetadataReaches(ch, m)}
			if !lf.matches(ev, stored) {
				t.Fatalf("the case's event does not match its filter %s", c.Filter)
			}
			// deliverTo drops what has expired (unexpired), then plan asks
			// mayRead of each reader.
			live := len(unexpired([]*item{{ev: ev}}, time.Now().Unix())) == 1
			if got := live && lf.mayRead(ev, stored, ch.System, reader, readable, meta); got != c.See {
				t.Errorf("unexpired and mayRead = %v, want %v", got, c.See)
			}
		})
	}
}

// Live matching keeps the read path's case rule (filter.Hex64, lower-case
// channel ids): an id, author or channel sent in upper case matches
// (sessions.Pins pins the channel as stored).
func TestLiveFilterCaseRule(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	// Issue 28: a UUID channel id compares case-insensitively (was: any
	// id); any other NIP-29 group id is kept as sent.
	const ch = "c0ffee00-0000-4000-8000-000000000000"
	ev := &nostr.Event{Kind: 9, CreatedAt: 10, Tags: nostr.Tags{{"h", ch}}}
	if err := ev.Sign(sk); err != nil {
		t.Fatal(err)
	}
	f := newLiveFilter(nostr.Filter{IDs: []string{strings.ToUpper(ev.ID)}, Authors: []string{strings.ToUpper(ev.PubKey)}, Tags: nostr.TagMap{"h": {strings.ToUpper(ch)}}})
	if !f.matches(ev, ch) || !f.names(ch) {
		t.Fatal("upper-case ids, authors and a UUID #h must match as the stored read does")
	}
}

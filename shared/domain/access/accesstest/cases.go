// Package accesstest loads access/testdata/cases.json, the one table of the
// access rule that shared/domain/access runs against its Go functions and
// shared/postgres/store against their SQL twin.
package accesstest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// Case is one row of the table.
type Case struct {
	Name    string       `json:"name"`
	Channel *CaseChannel `json:"channel"` // nil: the event is outside any channel
	Member  string       `json:"member"`  // never, active, removed
	Kind    int          `json:"kind"`
	P       string       `json:"p"` // the event's p tag: "reader", "other" or none
	// Author is who signs the event: "reader", or (empty) a key that is
	// neither reader nor other.
	Author string `json:"author"`
	// Tags are more tags of the event (e.g. Buzz's ["shared","true"]).
	Tags [][]string `json:"tags"`
	// Filter is a NIP-01 filter; "$ch" stands for the case's channel id.
	Filter json.RawMessage `json:"filter"`
	Read   *bool           `json:"read"`  // MayRead through Filter; nil without a channel
	Write  *bool           `json:"write"` // MayWrite; nil without a channel
	See    bool            `json:"see"`   // MaySee of the event through Filter
	// Reaches is access.Reaches, what store.Readable and live delivery's
	// read answer, when it differs from Write (a restricted group); nil:
	// the same as Write.
	Reaches *bool `json:"reaches"`
}

// WantReaches is the case's Reaches.
func (c *Case) WantReaches() bool {
	if c.Reaches != nil {
		return *c.Reaches
	}
	return c.Write != nil && *c.Write
}

// CaseChannel is a case's channel as stored.
type CaseChannel struct {
	Exists     bool   `json:"exists"`
	Visibility string `json:"visibility"`
	Type       string `json:"type"`
	Deleted    bool   `json:"deleted"`
	// NIP-29 flags beyond private (Visibility): issue 28.
	Restricted bool `json:"restricted"`
	Hidden     bool `json:"hidden"`
	Closed     bool `json:"closed"`
}

// Load reads the case table at path.
func Load(path string) ([]Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("accesstest: read cases: %w", err)
	}
	var doc struct {
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("accesstest: decode cases: %w", err)
	}
	return doc.Cases, nil
}

// Rule is the case's channel and standing as the rule sees them.
func (c *Case) Rule() (access.Channel, access.Member) {
	var ch access.Channel
	if c.Channel != nil {
		ch = access.Channel{Exists: c.Channel.Exists, Deleted: c.Channel.Deleted, Open: c.Channel.Visibility == "open", System: c.Channel.Type == "system",
			Restricted: c.Channel.Restricted, Hidden: c.Channel.Hidden}
	}
	m := map[string]access.Member{"never": access.Never, "active": access.Active, "removed": access.Removed}[c.Member]
	return ch, m
}

// NostrFilter is the case's filter as a client sends it, with channel in
// place of "$ch".
func (c *Case) NostrFilter(channel string) (nostr.Filter, error) {
	var nf nostr.Filter
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(c.Filter), "$ch", channel)), &nf); err != nil {
		return nostr.Filter{}, fmt.Errorf("case %q: filter: %w", c.Name, err)
	}
	return nf, nil
}

// FilterFor is the case's filter with channel in place of "$ch".
func (c *Case) FilterFor(channel string) (filter.Filter, error) {
	nf, err := c.NostrFilter(channel)
	return filter.FromNostr(nf), err
}

// SearchWord is the content of every case's event: a NIP-50 search for it
// finds the event when its kind is searchable and the reader sees it.
const SearchWord = "quetzal"

// Event is the case's event in channel, signed by author (see SignedBy);
// reader and other are the keys "reader" and "other" in P.
func (c *Case) Event(channel, author, reader, other string, at int64) (*nostr.Event, error) {
	ev := &nostr.Event{Kind: c.Kind, CreatedAt: nostr.Timestamp(at), Tags: nostr.Tags{}, Content: SearchWord}
	if c.Channel != nil {
		ev.Tags = append(ev.Tags, nostr.Tag{"h", channel})
		if kinds.ChannelState(c.Kind) {
			ev.Tags = append(ev.Tags, nostr.Tag{"d", channel})
		}
	}
	for _, t := range c.Tags {
		ev.Tags = append(ev.Tags, nostr.Tag(t))
	}
	switch c.P {
	case "reader":
		ev.Tags = append(ev.Tags, nostr.Tag{"p", reader})
	case "other":
		ev.Tags = append(ev.Tags, nostr.Tag{"p", other})
	}
	if err := ev.Sign(author); err != nil {
		return nil, fmt.Errorf("case %q: sign: %w", c.Name, err)
	}
	return ev, nil
}

// SignedBy is the secret key that signs the case's event: readerSK when
// Author is "reader", else author.
func (c *Case) SignedBy(author, readerSK string) string {
	if c.Author == "reader" {
		return readerSK
	}
	return author
}

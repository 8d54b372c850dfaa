// Package accesstest loads access/testdata/cases.json, the one table of the
// access rule that shared/domain/access runs against its Go functions and
// shared/postgres/store against their SQL twin, every case over every read
// path the table lists (plain, search, window, thread window, thread panel,
// their COUNTs and root probes).
package accesstest

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
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
	// Window is the answer of the window paths (Path.Expect "window"): the
	// reads that name the case's channel by #h and serve timeline rows only
	// while the reader may read it. Required for an event in a channel; an
	// event outside any channel is in no window (nil: false).
	Window *bool `json:"window"`
	// Reaches is access.Reaches, what store.ChannelsCheckReadable and live delivery's
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

// Path is one read path of the table's path dimension: every case runs
// over every path, against the Go rule and against its SQL twin, each of
// which has one runner per path name (and fails on a name it has no runner
// for, or a runner the table does not list).
type Path struct {
	Name string `json:"name"`
	// Expect is which answer of a case the path gives: "see" (Case.See) or
	// "window" (Case.Window).
	Expect string `json:"expect"`
	// SearchableOnly: the path finds only the searchable kinds (NIP-50).
	SearchableOnly bool `json:"searchable_only"`
}

// Expectations a path can give.
const (
	ExpectSee    = "see"
	ExpectWindow = "window"
)

// Table is the case table: its paths and its cases.
type Table struct {
	Paths []Path `json:"paths"`
	Cases []Case `json:"cases"`
}

// Load reads the case table at path: every path names a known expectation,
// and every case in a channel says its window answer.
func Load(path string) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("accesstest: read cases: %w", err)
	}
	var t Table
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("accesstest: decode cases: %w", err)
	}
	for _, p := range t.Paths {
		if p.Expect != ExpectSee && p.Expect != ExpectWindow {
			return nil, fmt.Errorf("accesstest: path %q: expect %q is neither %q nor %q", p.Name, p.Expect, ExpectSee, ExpectWindow)
		}
	}
	for _, c := range t.Cases {
		if c.Channel != nil && c.Window == nil {
			return nil, fmt.Errorf("accesstest: case %q is in a channel and says no window answer", c.Name)
		}
	}
	return &t, nil
}

// Want is the answer the case must get over path p.
func (c *Case) Want(p Path) bool {
	want := c.See
	if p.Expect == ExpectWindow {
		want = c.Window != nil && *c.Window
	}
	return want && (!p.SearchableOnly || kinds.Searchable(c.Kind))
}

// Runners checks that runners has exactly one runner per path of t: a path
// without a runner, or a runner of no path, is an error.
func Runners[R any](t *Table, runners map[string]R) error {
	for _, p := range t.Paths {
		if _, ok := runners[p.Name]; !ok {
			return fmt.Errorf("accesstest: no runner for path %q", p.Name)
		}
	}
	for name := range runners {
		if !slices.ContainsFunc(t.Paths, func(p Path) bool { return p.Name == name }) {
			return fmt.Errorf("accesstest: runner %q is of no path in the table", name)
		}
	}
	return nil
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

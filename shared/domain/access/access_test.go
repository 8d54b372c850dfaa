package access_test

import (
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/access/accesstest"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// The Go rule answers every row of the case table over every path of the
// table (its SQL twin runs the same table in shared/postgres/store).
func TestRuleCases(t *testing.T) {
	table, err := accesstest.Load("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Cases) < 20 {
		t.Fatalf("%d cases: the table is cut short", len(table.Cases))
	}
	const channel = "0b7e3f5a-6c1d-4e2b-9a8f-1d2c3b4a5e6f"
	reader, other := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	readerPK, _ := nostr.GetPublicKey(reader)
	otherPK, _ := nostr.GetPublicKey(other)
	now := time.Now().Unix()
	// The Go rule of each path: the reads through the case's filter
	// (MaySee through it), and the window reads, which name the channel
	// and serve its timeline rows (maySeeInWindow).
	type rule func(c *accesstest.Case, ev *nostr.Event, ch access.Channel, m access.Member, named bool) bool
	see := func(c *accesstest.Case, ev *nostr.Event, ch access.Channel, m access.Member, named bool) bool {
		return access.Unexpired(ev, now) && access.MaySee(ev, readerPK, c.Channel != nil, access.MayReadKind(ch, m, named, c.Kind))
	}
	search := func(c *accesstest.Case, ev *nostr.Event, ch access.Channel, m access.Member, named bool) bool {
		return kinds.Searchable(c.Kind) && see(c, ev, ch, m, named)
	}
	window := func(c *accesstest.Case, ev *nostr.Event, ch access.Channel, m access.Member, _ bool) bool {
		return c.Channel != nil && !slices.Contains(kinds.NotRowKinds(), c.Kind) && access.Unexpired(ev, now) && maySeeInWindow(ev, readerPK, ch, m)
	}
	rules := map[string]rule{
		"plain": see, "plain COUNT": see, "search": search, "search COUNT": search,
		"window": window, "window COUNT": window,
		"thread window": window, "thread window COUNT": window, "thread window root": window,
		"thread panel": window, "thread panel COUNT": window, "thread panel root": window,
	}
	if err := accesstest.Runners(table, rules); err != nil {
		t.Fatal(err)
	}
	for _, c := range table.Cases {
		t.Run(c.Name, func(t *testing.T) {
			ch, m := c.Rule()
			f, err := c.FilterFor(channel)
			if err != nil {
				t.Fatal(err)
			}
			named := access.Names(&f, channel)
			read := access.MayRead(ch, m, named)
			if c.Read != nil && read != *c.Read {
				t.Errorf("MayRead = %v, want %v", read, *c.Read)
			}
			if c.Write != nil {
				if got := access.MayWrite(ch, m); got != *c.Write {
					t.Errorf("MayWrite = %v, want %v", got, *c.Write)
				}
			}
			ev, err := c.Event(channel, c.SignedBy(other, reader), readerPK, otherPK, 1_790_000_000)
			if err != nil {
				t.Fatal(err)
			}
			inChannel := c.Channel != nil
			if !f.Matches(ev, map[bool]string{true: channel}[inChannel]) {
				t.Fatalf("the case's event does not match its filter %s", c.Filter)
			}
			for _, p := range table.Paths {
				if got, want := rules[p.Name](&c, ev, ch, m, named), c.Want(p); got != want {
					t.Errorf("%s: the Go rule answers %v, want %v", p.Name, got, want)
				}
			}
		})
	}
}

func TestNamed(t *testing.T) {
	for _, c := range []struct {
		name  string
		kinds []int
		tags  map[string][]string
		want  []string
	}{
		{"#h", []int{9}, map[string][]string{"h": {"a"}, "d": {"x"}}, []string{"a"}},
		{"#d of state kinds", []int{39000, 39003}, map[string][]string{"d": {"b"}}, []string{"b"}},
		{"#d with another kind", []int{39000, 1}, map[string][]string{"d": {"b"}}, nil},
		{"#d without kinds", nil, map[string][]string{"d": {"b"}}, nil},
		{"nothing", []int{9}, nil, nil},
	} {
		f := filterOf(c.kinds, c.tags)
		got := access.Named(&f)
		if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
			t.Errorf("%s: Named = %q, want %q", c.name, got, c.want)
		}
	}
}

func filterOf(kinds []int, tags map[string][]string) filter.Filter {
	return filter.Filter{Kinds: kinds, Tags: tags}
}

// NIP-ER: a filter of only reminders and only of other keys is refused;
// any other kind, no authors, or the reader among the authors is served.
func TestOthersReminders(t *testing.T) {
	const me, you = "aa", "bb"
	for _, c := range []struct {
		name    string
		kinds   []int
		authors []string
		want    bool
	}{
		{"another key's reminders", []int{30300}, []string{you}, true},
		{"repeated kind", []int{30300, 30300}, []string{you}, true},
		{"own reminders", []int{30300}, []string{me}, false},
		{"own and another key's", []int{30300}, []string{you, me}, false},
		{"no authors", []int{30300}, nil, false},
		{"mixed kinds", []int{30300, 1}, []string{you}, false},
		{"another author-only kind", []int{30350}, []string{you}, false},
		{"no kinds", nil, []string{you}, false},
	} {
		f := filter.Filter{Kinds: c.kinds, Authors: c.authors}
		if got := access.OthersReminders(&f, me); got != c.want {
			t.Errorf("%s: OthersReminders = %v, want %v", c.name, got, c.want)
		}
	}
}

// maySeeInWindow is the rule of the reads that name channel c by #h and
// serve its timeline rows: the channel window, the thread window and the
// thread panel, their COUNTs and their root probes (a thread's root is one
// of the channel's events). They serve nothing while the reader may not
// read c (access.MayRead, named), and then each event by access.MaySee: Buzz's gated kinds
// filed in c are its author's or recipient's only, in a window as anywhere.
// The store's window statements are its SQL twin; it is kept here as
// their oracle.
func maySeeInWindow(ev *nostr.Event, reader string, c access.Channel, m access.Member) bool {
	return access.MayRead(c, m, true) && access.MaySee(ev, reader, true, access.MayReadKind(c, m, true, ev.Kind))
}

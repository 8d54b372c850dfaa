package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/access/accesstest"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// The SQL twin of the access rule answers every row of the table the Go rule
// answers (shared/domain/access/testdata/cases.json) over every path of the
// table, on a fresh Postgres: the plain read of the case's event and its
// COUNT and search, the channel window, the thread window and the thread
// panel with the case's event as a reply, their COUNTs, and their root
// probes with the case's event as the root; beside them the channel check of
// windows and threads (Snapshot.CanRead), live delivery's Readable and
// ChannelsCheckMetadataReadable.
func TestAccessCasesInSQL(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	table, err := accesstest.Load("../../domain/access/testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	owner, ownerPK := keypair()
	readerSK, readerPK := keypair()
	_, otherPK := keypair()
	const at = int64(1_790_000_000)
	read := func(fn func(s *store.Snapshot) error) {
		t.Helper()
		if err := st.Read(ctx, "default", readerPK, fn); err != nil {
			t.Fatal(err)
		}
	}
	count := func(r store.Countable) bool {
		t.Helper()
		n, err := st.EventsCount(ctx, "default", readerPK, []store.Countable{r})
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	has := func(rows []records.Row, id string) bool {
		return slices.ContainsFunc(rows, func(r records.Row) bool { return r.ID == id })
	}
	// x is one case as stored: its event (ev, a thread root when in a
	// channel), the same event as a reply (reply) to a message the reader
	// may read when it may read the channel (root), and the case's filter
	// narrowed to ev's id.
	type x struct {
		c           *accesstest.Case
		channel     string
		ev, reply   *nostr.Event
		root        string
		f           filter.Filter
		windowKinds [][]int // the window filters' kinds: none, and ev's kind
	}
	plain := func(f filter.Filter) func(x) bool {
		return func(x x) bool {
			var rows []records.Row
			read(func(s *store.Snapshot) error {
				var err error
				rows, err = s.Plain(ctx, &store.PlainRead{Filter: &f, Limit: 10})
				return err
			})
			return len(rows) == 1
		}
	}
	search := func(x x) filter.Filter {
		f := x.f
		f.Search = accesstest.SearchWord
		return f
	}
	// A window path answers true only when every window filter (without
	// kinds, and with the event's kind) finds the event, false only when
	// none does.
	each := func(t *testing.T, x x, name string, fn func(f filter.Filter) bool) bool {
		var got []bool
		for _, ks := range x.windowKinds {
			got = append(got, fn(filter.Filter{Kinds: ks, Tags: map[string][]string{"h": {x.channel}}}))
		}
		if slices.Contains(got, true) && slices.Contains(got, false) {
			t.Errorf("%s: the window filters disagree: %v for kinds %v", name, got, x.windowKinds)
		}
		return got[0]
	}
	runners := map[string]func(t *testing.T, x x) bool{
		"plain":        func(t *testing.T, x x) bool { return plain(x.f)(x) },
		"plain COUNT":  func(t *testing.T, x x) bool { f := x.f; return count(&store.PlainRead{Filter: &f}) },
		"search":       func(t *testing.T, x x) bool { return plain(search(x))(x) },
		"search COUNT": func(t *testing.T, x x) bool { f := search(x); return count(&store.PlainRead{Filter: &f}) },
		// The window as the query service serves it: nothing unless
		// CanReadWindow, then the rows.
		"window": func(t *testing.T, x x) bool {
			return each(t, x, "window", func(f filter.Filter) bool {
				var ok bool
				var rows []records.Row
				read(func(s *store.Snapshot) error {
					var err error
					if ok, _, err = s.CanReadWindow(ctx, x.channel); err != nil || !ok {
						return err
					}
					rows, err = s.Window(ctx, &store.WindowRead{Filter: &f, Channel: x.channel, Limit: 10})
					return err
				})
				return ok && has(rows, x.ev.ID)
			})
		},
		"window COUNT": func(t *testing.T, x x) bool {
			return each(t, x, "window COUNT", func(f filter.Filter) bool {
				f.IDs = []string{x.ev.ID}
				return count(&store.WindowRead{Filter: &f, Channel: x.channel})
			})
		},
		// The thread window: CanRead, the root probe, then the rows.
		"thread window": func(t *testing.T, x x) bool {
			return each(t, x, "thread window", func(f filter.Filter) bool {
				var ok bool
				var rows []records.Row
				read(func(s *store.Snapshot) error {
					var err error
					if ok, err = s.CanRead(ctx, x.channel, []string{x.channel}); err != nil || !ok {
						return err
					}
					if ok, err = s.RootIn(ctx, x.channel, x.root); err != nil || !ok {
						return err
					}
					rows, err = s.ThreadWindow(ctx, &store.ThreadWindowRead{Filter: &f, Channel: x.channel, Root: x.root, Depth: 10, Limit: 10})
					return err
				})
				return ok && x.reply != nil && has(rows, x.reply.ID)
			})
		},
		"thread window COUNT": func(t *testing.T, x x) bool {
			return each(t, x, "thread window COUNT", func(f filter.Filter) bool {
				return count(&store.ThreadWindowRead{Filter: &f, Channel: x.channel, Root: x.root, Depth: 10})
			})
		},
		// The thread window on the case's event as its root: served
		// (CanRead and RootIn) exactly when the reader sees the event in
		// the window, else as a root nothing stored.
		"thread window root": func(t *testing.T, x x) bool {
			var ok bool
			read(func(s *store.Snapshot) error {
				var err error
				if ok, err = s.CanRead(ctx, x.channel, []string{x.channel}); err != nil || !ok {
					return err
				}
				ok, err = s.RootIn(ctx, x.channel, x.ev.ID)
				return err
			})
			return ok
		},
		// The thread panel (depth_limit) naming the channel by #h: the
		// root probe, CanRead of its channel, then the replies.
		"thread panel": func(t *testing.T, x x) bool {
			return each(t, x, "thread panel", func(f filter.Filter) bool {
				var ok bool
				var rows []records.Row
				read(func(s *store.Snapshot) error {
					channel, depth, found, err := s.ThreadRoot(ctx, x.root, f.Tags["h"])
					if err != nil || !found {
						return err
					}
					if ok, err = s.CanRead(ctx, channel, f.Tags["h"]); err != nil || !ok {
						return err
					}
					rows, err = s.Thread(ctx, &store.ThreadRead{Filter: &f, Root: x.root, Depth: 10, Limit: 10}, channel, depth)
					return err
				})
				return ok && x.reply != nil && has(rows, x.reply.ID)
			})
		},
		"thread panel COUNT": func(t *testing.T, x x) bool {
			return each(t, x, "thread panel COUNT", func(f filter.Filter) bool {
				return count(&store.ThreadRead{Filter: &f, Root: x.root, Depth: 10})
			})
		},
		"thread panel root": func(t *testing.T, x x) bool {
			var ok bool
			read(func(s *store.Snapshot) error {
				h := []string{x.channel}
				channel, _, found, err := s.ThreadRoot(ctx, x.ev.ID, h)
				if err != nil || !found {
					return err
				}
				ok, err = s.CanRead(ctx, channel, h)
				return err
			})
			return ok
		},
	}
	if err := accesstest.Runners(table, runners); err != nil {
		t.Fatal(err)
	}
	for _, c := range table.Cases {
		t.Run(c.Name, func(t *testing.T) {
			channel := uuid.NewString()
			ev, err := c.Event(channel, c.SignedBy(owner, readerSK), readerPK, otherPK, at)
			if err != nil {
				t.Fatal(err)
			}
			cx := x{c: &c, channel: channel, ev: ev, windowKinds: [][]int{nil, {c.Kind}}}
			var root, reply *nostr.Event
			if c.Channel != nil {
				// The thread: a message of the channel's owner, and the
				// case's event again as its reply.
				root = &nostr.Event{Kind: 9, CreatedAt: nostr.Timestamp(at - 10), Tags: nostr.Tags{{"h", channel}}, Content: "root"}
				if err := root.Sign(owner); err != nil {
					t.Fatal(err)
				}
				reply, err = c.Event(channel, c.SignedBy(owner, readerSK), readerPK, otherPK, at+5)
				if err != nil {
					t.Fatal(err)
				}
				reply.Tags = append(reply.Tags, nostr.Tag{"e", root.ID, "", "reply"})
				if err := reply.Sign(c.SignedBy(owner, readerSK)); err != nil {
					t.Fatal(err)
				}
				cx.root, cx.reply = root.ID, reply
			}
			err = st.Tx(ctx, "default", func(tx *store.Tx) error {
				if ch := c.Channel; ch != nil && ch.Exists {
					flags := nip29.Flags{Private: ch.Visibility == nip29.Private, Restricted: ch.Restricted, Hidden: ch.Hidden, Closed: ch.Closed}
					if _, err := tx.ChannelsInsert(ctx, &nip29.Channel{ID: channel, Name: "c", Type: ch.Type, Visibility: ch.Visibility,
						Labels: []string{}, Creator: ownerPK, CreatedAt: at, Flags: flags}, ev.ID); err != nil {
						return err
					}
					if c.Member != "never" {
						if err := tx.ChannelMembersPut(ctx, channel, readerPK, "member", at); err != nil {
							return err
						}
					}
					if c.Member == "removed" {
						if err := tx.ChannelMembersDelete(ctx, channel, readerPK, at+1); err != nil {
							return err
						}
					}
					if ch.Deleted {
						if err := tx.ChannelsDelete(ctx, channel, at+2); err != nil {
							return err
						}
					}
				}
				meta := records.EventMeta{TopLevel: true, Search: kinds.Searchable(c.Kind)}
				if c.Channel != nil {
					meta.ChannelID = channel
					meta.Thread = &records.Thread{}
					if _, err := tx.EventsInsert(ctx, root, records.EventMeta{ChannelID: channel, TopLevel: true, Thread: &records.Thread{}}); err != nil {
						return err
					}
					if _, err := tx.EventsInsert(ctx, reply, records.EventMeta{ChannelID: channel, Search: meta.Search,
						Thread: &records.Thread{ParentID: root.ID, RootID: root.ID, Depth: 1}}); err != nil {
						return err
					}
				}
				_, err := tx.EventsInsert(ctx, ev, meta)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if cx.f, err = c.FilterFor(channel); err != nil {
				t.Fatal(err)
			}
			cx.f.IDs = []string{ev.ID}
			f := cx.f
			var canRead bool
			read(func(s *store.Snapshot) error {
				var err error
				canRead, err = s.CanRead(ctx, channel, access.Named(&f))
				return err
			})
			if c.Read != nil && canRead != *c.Read {
				t.Errorf("CanRead = %v, want %v", canRead, *c.Read)
			}
			if c.Write != nil {
				pair := records.ReadPair{Channel: channel, Reader: readerPK}
				ok, err := st.ChannelsCheckReadable(ctx, "default", []records.ReadPair{pair})
				if err != nil {
					t.Fatal(err)
				}
				if ok[pair] != c.WantReaches() {
					t.Errorf("Readable = %v, want %v (the rule before NIP-CL: Reaches)", ok[pair], c.WantReaches())
				}
				ch, m := c.Rule()
				meta, err := st.ChannelsCheckMetadataReadable(ctx, "default", []records.ReadPair{pair})
				if err != nil {
					t.Fatal(err)
				}
				if meta[pair] != access.MetadataReaches(ch, m) {
					t.Errorf("ChannelsCheckMetadataReadable = %v, want %v (access.MetadataReaches)", meta[pair], access.MetadataReaches(ch, m))
				}
			}
			for _, p := range table.Paths {
				if got, want := runners[p.Name](t, cx), c.Want(p); got != want {
					t.Errorf("%s: the SQL twin answers %v, want %v", p.Name, got, want)
				}
			}
			// A filter with kinds gets the predicate of those kinds'
			// branches only: the same answer, with the event's kind alone
			// and beside a kind of each other branch (where the kinds leave
			// the channels the filter names as they were: #d names a
			// channel only with state kinds alone).
			for _, ks := range [][]int{{ev.Kind}, {ev.Kind, 9}, {ev.Kind, 39000}, {ev.Kind, 1059}, {ev.Kind, 30179}, {ev.Kind, 30175}} {
				fk := f
				fk.Kinds = ks
				if !slices.Equal(access.Named(&fk), access.Named(&f)) {
					continue
				}
				if see := plain(fk)(cx); see != c.See {
					t.Errorf("plain read with kinds %v sees the event: %v, want %v", ks, see, c.See)
				}
			}
		})
	}
}

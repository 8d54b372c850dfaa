package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/access/accesstest"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// The SQL twin of the access rule answers every row of the table the Go rule
// answers (shared/domain/access/testdata/cases.json), on a fresh Postgres: the
// channel check of windows and threads (Snapshot.CanRead), live delivery's
// Readable, and the event predicate every filter read carries (a plain read
// of the case's event, and COUNT of it).
func TestAccessCasesInSQL(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	cases, err := accesstest.Load("../../domain/access/testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	owner, ownerPK := keypair()
	readerSK, readerPK := keypair()
	_, otherPK := keypair()
	const at = int64(1_790_000_000)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			channel := uuid.NewString()
			ev, err := c.Event(channel, c.SignedBy(owner, readerSK), readerPK, otherPK, at)
			if err != nil {
				t.Fatal(err)
			}
			err = st.Tx(ctx, "default", func(tx *store.Tx) error {
				if ch := c.Channel; ch != nil && ch.Exists {
					flags := nip29.Flags{Private: ch.Visibility == nip29.Private, Restricted: ch.Restricted, Hidden: ch.Hidden, Closed: ch.Closed}
					if _, err := tx.InsertChannel(ctx, &nip29.Channel{ID: channel, Name: "c", Type: ch.Type, Visibility: ch.Visibility,
						Labels: []string{}, Creator: ownerPK, CreatedAt: at, Flags: flags}, ev.ID); err != nil {
						return err
					}
					if c.Member != "never" {
						if err := tx.PutMember(ctx, channel, readerPK, "member", at); err != nil {
							return err
						}
					}
					if c.Member == "removed" {
						if err := tx.RemoveMember(ctx, channel, readerPK, at+1); err != nil {
							return err
						}
					}
					if ch.Deleted {
						if err := tx.DeleteChannel(ctx, channel, at+2); err != nil {
							return err
						}
					}
				}
				meta := store.EventMeta{TopLevel: true, Search: kinds.Searchable(c.Kind)}
				if c.Channel != nil {
					meta.ChannelID = channel
				}
				_, err := tx.InsertEvent(ctx, ev, meta)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			f, err := c.FilterFor(channel)
			if err != nil {
				t.Fatal(err)
			}
			f.IDs = []string{ev.ID}
			var read bool
			var rows []store.Row
			err = st.Read(ctx, "default", readerPK, func(s *store.Snapshot) error {
				var err error
				if read, err = s.CanRead(ctx, channel, access.Named(&f)); err != nil {
					return err
				}
				rows, err = s.Plain(ctx, &store.PlainRead{Filter: &f, Limit: 10})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.Read != nil && read != *c.Read {
				t.Errorf("CanRead = %v, want %v", read, *c.Read)
			}
			if c.Write != nil {
				pair := store.ReadPair{Channel: channel, Reader: readerPK}
				ok, err := st.Readable(ctx, "default", []store.ReadPair{pair})
				if err != nil {
					t.Fatal(err)
				}
				if ok[pair] != c.WantReaches() {
					t.Errorf("Readable = %v, want %v (the rule before NIP-CL: Reaches)", ok[pair], c.WantReaches())
				}
				// Live delivery reads the same answer with the channel's
				// subscriptions (the one-channel delivery statement).
				now := time.Now().Unix()
				if err := st.OpenConnection(ctx, store.Connection{ID: channel, Community: "default", Challenge: "c",
					RelayURLs: []string{"ws://x"}, ConnectedAt: now, ExpiresAt: now + 60}, 0); err != nil {
					t.Fatal(err)
				}
				if ok, err := st.Subscribe(ctx, store.NewSubscription{Community: "default", Pins: []string{channel}, CreatedAt: now,
					Subscription: store.Subscription{Connection: channel, Sub: "s", Pubkey: readerPK, Filters: "[{}]"}}, 1); err != nil || !ok {
					t.Fatalf("subscribe: %v %v", ok, err)
				}
				d, err := st.ForDelivery(ctx, "default", store.DeliveryRequest{Channels: []string{channel}, Now: now})
				if err != nil {
					t.Fatal(err)
				}
				ch, m := c.Rule()
				meta, err := st.MetadataReadable(ctx, "default", []store.ReadPair{pair})
				if err != nil {
					t.Fatal(err)
				}
				if meta[pair] != access.MetadataReaches(ch, m) {
					t.Errorf("MetadataReadable = %v, want %v (access.MetadataReaches)", meta[pair], access.MetadataReaches(ch, m))
				}
				if got, known := d.Reaches[pair]; !known || got != c.WantReaches() {
					t.Errorf("delivery's read of the subscriptions: reaches %v (answered: %v), want %v", got, known, c.WantReaches())
				}
			}
			if see := len(rows) == 1; see != c.See {
				t.Errorf("plain read sees the event: %v, want %v", see, c.See)
			}
			// NIP-50 search: the same rule, for the searchable kinds.
			sf := f
			sf.Search = accesstest.SearchWord
			var found []store.Row
			err = st.Read(ctx, "default", readerPK, func(s *store.Snapshot) error {
				var err error
				found, err = s.Plain(ctx, &store.PlainRead{Filter: &sf, Limit: 10})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if see, want := len(found) == 1, c.See && kinds.Searchable(c.Kind); see != want {
				t.Errorf("search finds the event: %v, want %v", see, want)
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
				var rows []store.Row
				if err := st.Read(ctx, "default", readerPK, func(s *store.Snapshot) error {
					var err error
					rows, err = s.Plain(ctx, &store.PlainRead{Filter: &fk, Limit: 10})
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if see := len(rows) == 1; see != c.See {
					t.Errorf("plain read with kinds %v sees the event: %v, want %v", ks, see, c.See)
				}
			}
			n, err := st.Count(ctx, "default", readerPK, []store.Countable{&store.PlainRead{Filter: &f}})
			if err != nil {
				t.Fatal(err)
			}
			if see := n == 1; see != c.See {
				t.Errorf("COUNT sees the event: %v, want %v", see, c.See)
			}
		})
	}
}

package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestParseSeen reads pg_snapshot's text form and refuses anything else.
func TestParseSeen(t *testing.T) {
	for _, c := range []struct {
		in   string
		want store.Seen
		ok   bool
	}{
		{"10:20:", store.Seen{Xmin: 10, Xmax: 20}, true},
		{"10:20:12,15", store.Seen{Xmin: 10, Xmax: 20, InProgress: []uint64{12, 15}}, true},
		{"7:7:", store.Seen{Xmin: 7, Xmax: 7}, true},
		{"", store.Seen{}, false},
		{"10:20", store.Seen{}, false},
		{"a:20:", store.Seen{}, false},
		{"10:b:", store.Seen{}, false},
		{"10:20:1,x", store.Seen{}, false},
		{"20:10:", store.Seen{}, false},
		{"-1:20:", store.Seen{}, false},
	} {
		got, err := store.ParseSeen(c.in)
		if (err == nil) != c.ok {
			t.Fatalf("ParseSeen(%q): %v, want ok %v", c.in, err, c.ok)
		}
		if c.ok && (got.Xmin != c.want.Xmin || got.Xmax != c.want.Xmax || !slices.Equal(got.InProgress, c.want.InProgress)) {
			t.Fatalf("ParseSeen(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// FuzzParseSeen: no input panics, and what parses keeps xmin <= xmax.
func FuzzParseSeen(f *testing.F) {
	for _, s := range []string{"10:20:", "10:20:12,15", "::", "1:2:3,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, err := store.ParseSeen(s); err == nil && got.Xmin > got.Xmax {
			t.Fatalf("ParseSeen(%q) = %+v: xmin above xmax", s, got)
		}
	})
}

// TestSeesIsPostgresVisibility: Seen.Sees answers as Postgres's
// pg_visible_in_snapshot does, for transactions below, between (in
// progress or not) and at or above a snapshot's bounds.
func TestSeesIsPostgresVisibility(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	for _, snap := range []string{"100:110:", "100:110:100,104,109", "100:100:", "5:9:6"} {
		seen, err := store.ParseSeen(snap)
		if err != nil {
			t.Fatal(err)
		}
		for x := uint64(1); x < 120; x++ {
			var pg bool
			if err := store.PoolOf(st).QueryRow(ctx, `SELECT pg_visible_in_snapshot($1::bigint::text::xid8, $2::pg_snapshot)`,
				int64(x), snap).Scan(&pg); err != nil {
				t.Fatal(err)
			}
			if got := seen.Sees(x); got != pg {
				t.Fatalf("snapshot %s, transaction %d: Sees %v, Postgres %v", snap, x, got, pg)
			}
		}
	}
}

// TestEventsCommittedAfterARead: after a read that took its snapshot
// (ReadPlain with seen), EventsListCommittedAfter returns exactly what the
// read did not see: an event whose transaction was in progress at the
// snapshot and committed after it, and one stored after it; not one
// committed before it, nor one of another community, nor a deleted one.
func TestEventsCommittedAfterARead(t *testing.T) {
	ctx := context.Background()
	st := testkit.NewStore(t, store.Options{MaxConns: 4})
	const community = "default"
	channel := testkit.ChannelID()
	sk, _ := keypair()
	event := func(content string) *nostr.Event {
		ev := &nostr.Event{Kind: 9, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", channel}}, Content: content}
		if err := ev.Sign(sk); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	insert := func(ev *nostr.Event) error {
		return st.Tx(ctx, community, func(tx *store.Tx) error {
			_, err := tx.EventsInsert(ctx, ev, records.EventMeta{ChannelID: channel, TopLevel: true})
			return err
		})
	}
	before, during, after, deleted := event("before"), event("in progress at the read"), event("after"), event("deleted")
	if err := insert(before); err != nil {
		t.Fatal(err)
	}
	// A transaction that stored its event and holds its commit until
	// the read took its snapshot.
	inserted, release, committed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		committed <- st.Tx(ctx, community, func(tx *store.Tx) error {
			if _, err := tx.EventsInsert(ctx, during, records.EventMeta{ChannelID: channel, TopLevel: true}); err != nil {
				return err
			}
			close(inserted)
			<-release
			return nil
		})
	}()
	<-inserted
	var seen store.Seen
	if _, err := st.ReadPlain(ctx, community, "", nil, &seen); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	for _, ev := range []*nostr.Event{after, deleted} {
		if err := insert(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Tx(ctx, community, func(tx *store.Tx) error {
		_, err := tx.EventsSetDeleted(ctx, deleted.ID, nostr.Now().Time().Unix())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	raws, err := st.EventsListCommittedAfter(ctx, community, seen)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, raw := range raws {
		var ev nostr.Event
		if err := ev.UnmarshalJSON([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Content)
	}
	slices.Sort(got)
	if want := []string{"after", "in progress at the read"}; !slices.Equal(got, want) {
		t.Fatalf("committed after the read: %q, want %q", got, want)
	}
	if other, err := st.EventsListCommittedAfter(ctx, "elsewhere", seen); err != nil || len(other) != 0 {
		t.Fatalf("another community: %d events, %v; want none", len(other), err)
	}
}

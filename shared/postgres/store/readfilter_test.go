package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// filter.Filter means one thing in SQL (a stored read, as REQ, COUNT and
// /query run it) and in Go (Matches, as live delivery runs it): for every
// filter of the table, the stored read returns exactly the events Matches
// accepts, and COUNT counts them.
func TestFilterSQLMatchesGo(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	alice, alicePK := keypair()
	bob, bobPK := keypair()
	ch, other := uuid.NewString(), uuid.NewString()
	const t0 = int64(1_790_000_000)

	type stored struct {
		ev      *nostr.Event
		channel string
	}
	var all []stored
	err := st.Tx(ctx, "default", func(tx *store.Tx) error {
		for _, id := range []string{ch, other} {
			if _, err := tx.ChannelsInsert(ctx, &nip29.Channel{ID: id, Name: "c", Type: "stream", Visibility: "open",
				Labels: []string{}, Creator: alicePK, CreatedAt: t0}, strings.Repeat("0", 64)); err != nil {
				return err
			}
		}
		add := func(sk string, kind int, at int64, channel, content string, tags ...nostr.Tag) (*nostr.Event, error) {
			ev := &nostr.Event{Kind: kind, CreatedAt: nostr.Timestamp(at), Content: content, Tags: nostr.Tags(tags)}
			if ev.Tags == nil {
				ev.Tags = nostr.Tags{}
			}
			if err := ev.Sign(sk); err != nil {
				return nil, err
			}
			if _, err := tx.EventsInsert(ctx, ev, records.EventMeta{ChannelID: channel, TopLevel: true, Search: kind == 9 || kind == 1}); err != nil {
				return nil, err
			}
			all = append(all, stored{ev, channel})
			return ev, nil
		}
		m1, err := add(alice, 9, t0+1, ch, "deploy went fine", nostr.Tag{"h", ch}, nostr.Tag{"t", "release"})
		if err != nil {
			return err
		}
		if _, err := add(bob, 9, t0+2, ch, "lunch friday", nostr.Tag{"h", ch}); err != nil {
			return err
		}
		if _, err := add(bob, 7, t0+3, ch, "+", nostr.Tag{"e", m1.ID}, nostr.Tag{"p", alicePK}); err != nil {
			return err
		}
		if _, err := add(alice, 9, t0+3, other, "deploy elsewhere", nostr.Tag{"h", other}, nostr.Tag{"t", "release"}); err != nil {
			return err
		}
		_, err = add(bob, 1, t0+4, "", "a note on deploy", nostr.Tag{"t", "note"}, nostr.Tag{"p", alicePK})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m1 := all[0].ev
	for _, raw := range []string{
		`{}`,
		`{"kinds":[9]}`,
		`{"kinds":[9,7],"#h":["` + strings.ToUpper(ch) + `"]}`,
		`{"#h":["` + ch + `","` + other + `"],"authors":["` + bobPK + `"]}`,
		`{"ids":["` + strings.ToUpper(m1.ID) + `"]}`,
		`{"authors":["` + alicePK + `"],"kinds":[9]}`,
		fmt.Sprintf(`{"since":%d,"until":%d}`, t0+2, t0+3),
		`{"#e":["` + m1.ID + `"]}`,
		`{"#p":["` + alicePK + `"],"kinds":[7]}`,
		`{"#t":["release"],"#h":["` + ch + `"]}`,
		`{"#t":["release","note"]}`,
		`{"search":"deploy"}`,
		`{"search":"deploy","#h":["` + ch + `"]}`,
		`{"kinds":[]}`,
		`{"#t":[]}`,
		`{"ids":[]}`,
	} {
		t.Run(raw, func(t *testing.T) {
			var nf nostr.Filter
			if err := json.Unmarshal([]byte(raw), &nf); err != nil {
				t.Fatal(err)
			}
			f := filter.FromNostr(nf)
			var want []string
			for _, s := range all {
				if f.Matches(s.ev, s.channel) {
					want = append(want, s.ev.ID)
				}
			}
			var rows []records.Row
			if err := st.Read(ctx, "default", bobPK, func(s *store.Snapshot) error {
				var err error
				rows, err = s.Plain(ctx, &store.PlainRead{Filter: &f, Limit: 1000})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(rows))
			for i, r := range rows {
				got[i] = r.ID
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("SQL returns %d events, Matches accepts %d", len(got), len(want))
			}
			n, err := st.EventsCount(ctx, "default", bobPK, []store.Countable{&store.PlainRead{Filter: &f}})
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(len(want)) {
				t.Fatalf("COUNT = %d, Matches accepts %d", n, len(want))
			}
		})
	}
}

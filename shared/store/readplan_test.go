package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/filter"
	"github.com/buzzrelay/relay/shared/store"
	"github.com/buzzrelay/relay/shared/testkit"
)

// TestChannelPageNeedsNoStatistics: a REQ for one channel's newest page
// ({"kinds":[9],"#h":[ch],"limit":50}) on a table just loaded and never
// analyzed walks the channel's index in order and stops at the page: it
// neither reads (and sorts) the whole channel, as a "channel_id = ANY" scan
// made Postgres do (30 ms instead of 4 at 20,000 events), nor walks the
// community's newer events of other channels.
func TestChannelPageNeedsNoStatistics(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	ch := testkit.ChannelID()
	testkit.SeedChannel(t, st, testkit.SeedOptions{Channel: ch, Events: 3000, Start: 1_700_000_000, Seed: 11})
	// Another channel's newer events, as in a community with more than one.
	testkit.SeedChannel(t, st, testkit.SeedOptions{Channel: testkit.ChannelID(), Events: 3000, Start: 1_710_000_000, Seed: 12})
	f := &filter.Filter{Kinds: []int{9}, Tags: map[string][]string{"h": {ch}}}
	q, args, ok := store.PlainSQL("default", testkit.NewKey(t).Pub, &store.PlainRead{Filter: f, Limit: 50})
	if !ok {
		t.Fatal("the filter matches nothing")
	}
	var plan []byte
	if err := st.Pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+q, args...).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	byChannel := false
	for _, n := range planNodes(t, plan) {
		if n.Type == "Sort" || (n.Relation == "events" && n.Rows*n.Loops > 200) {
			t.Fatalf("%s on %q returned %.0f rows: the page is not read in index order\n%s", n.Type, n.Relation, n.Rows*n.Loops, plan)
		}
		// An equality on the channel, whatever the estimates: the index
		// then returns the channel's rows newest first.
		byChannel = byChannel || (n.Relation == "events" && strings.Contains(n.IndexCond, "channel_id = '"))
	}
	if !byChannel {
		t.Fatalf("the page is not looked up by its channel's index\n%s", plan)
	}
}

package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestChannelPageNeedsNoStatistics: a REQ for one channel's newest page
// ({"kinds":[9],"#h":[ch],"limit":50}) on a table just loaded and never
// analyzed walks the channel's index in order and stops at the page: it
// neither reads (and sorts) the whole channel, as a "channel_id = ANY" scan
// made Postgres do (30 ms instead of 4 at 20,000 events), nor walks the
// community's newer events of other channels.
func TestChannelPageNeedsNoStatistics(t *testing.T) {
	st := freshStore(t)
	ch := testkit.ChannelID()
	testkit.SeedChannel(t, dbOf(st), testkit.SeedOptions{Channel: ch, Events: 3000, Start: 1_700_000_000, Seed: 11})
	// Another channel's newer events, as in a community with more than one.
	testkit.SeedChannel(t, dbOf(st), testkit.SeedOptions{Channel: testkit.ChannelID(), Events: 3000, Start: 1_710_000_000, Seed: 12})
	assertPageWalk(t, st, ch)
}

// TestChannelPageSurvivesStaleStatistics: the same page when the table's
// statistics are out of date, as after a bulk load or in a community where
// a new channel got busy: taken when the channel held every row (another
// channel's 3,000 newer events came after), or before the channel existed.
func TestChannelPageSurvivesStaleStatistics(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	if _, err := store.PoolOf(st).Exec(ctx, "ALTER TABLE events SET (autovacuum_enabled = off)"); err != nil {
		t.Fatal(err)
	}
	old, busy := testkit.ChannelID(), testkit.ChannelID()
	testkit.SeedChannel(t, dbOf(st), testkit.SeedOptions{Channel: old, Events: 3000, Start: 1_700_000_000, Seed: 11})
	testkit.Analyze(t, dbOf(st))
	testkit.SeedChannel(t, dbOf(st), testkit.SeedOptions{Channel: busy, Events: 3000, Start: 1_710_000_000, Seed: 12})
	t.Run("channel the statistics call dominant", func(t *testing.T) { assertPageWalk(t, st, old) })
	t.Run("channel the statistics do not know", func(t *testing.T) { assertPageWalk(t, st, busy) })
}

// assertPageWalk checks that a REQ for the newest page of channel ch
// ({"kinds":[9],"#h":[ch],"limit":50}) walks the channel's index in order
// and stops at the page.
func assertPageWalk(t *testing.T, st *store.Store, ch string) {
	t.Helper()
	f := &filter.Filter{Kinds: []int{9}, Tags: map[string][]string{"h": {ch}}}
	q, args, ok := store.PlainSQL("default", testkit.NewKey(t).Pub, &store.PlainRead{Filter: f, Limit: 50})
	if !ok {
		t.Fatal("the filter matches nothing")
	}
	var plan []byte
	if err := store.PoolOf(st).QueryRow(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+q, args...).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	byChannel := false
	for _, n := range planNodes(t, plan) {
		if n.Type == "Sort" || (n.Relation == "events" && (n.Rows+n.RemovedByFilter)*n.Loops > 200) {
			t.Fatalf("%s on %q read %.0f rows: the page is not read in index order\n%s", n.Type, n.Relation, (n.Rows+n.RemovedByFilter)*n.Loops, plan)
		}
		// A condition on the channel, whatever the estimates: the index
		// then returns the channel's rows newest first.
		byChannel = byChannel || (n.Relation == "events" && strings.Contains(n.IndexCond, "channel_id >= '"))
	}
	if !byChannel {
		t.Fatalf("the page is not looked up by its channel's index\n%s", plan)
	}
}

// TestSidebarUnreadWindowsProbeThreadRows: the sidebar's unread windows
// (a page of 20 channels, up to 101 rows each) read each row's thread
// metadata by its key, never by scanning thread_metadata: a plain LEFT
// JOIN let the planner hash the whole table (85,000 rows, most of a
// 264 ms sidebar page at 100,000 events).
func TestSidebarUnreadWindowsProbeThreadRows(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	reader := testkit.NewKey(t).Pub
	var chs []string
	var ats []int64
	var ids []string
	for i := 0; i < 40; i++ {
		ch := testkit.ChannelID()
		testkit.SeedChannel(t, dbOf(st), testkit.SeedOptions{Channel: ch, Events: 500, Start: 1_700_000_000, PerSecond: 5, Seed: uint64(i + 1)})
		if i < 20 {
			chs, ats, ids = append(chs, ch), append(ats, 1_700_000_000), append(ids, "")
		}
	}
	testkit.Analyze(t, dbOf(st))
	var plan string
	if err := store.PoolOf(st).QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+store.UnreadWindowsSQL,
		"default", reader, chs, ats, ids, []int{9, 40002, 45001, 45003}, int64(0), 101).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plan, `"Node Type": "Seq Scan"`) {
		t.Errorf("the unread windows scan a table:\n%s", plan)
	}
}

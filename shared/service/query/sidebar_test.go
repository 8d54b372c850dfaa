package query

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// exact reports whether c is the exact count n.
func exact(c ReadCount, n int) bool { return c.Status == "exact" && c.Value != nil && *c.Value == n }

// sidebarOf is reader's rows by channel id (every page, all groups).
func (e *env) sidebarOf(reader user) map[string]SidebarRow {
	e.t.Helper()
	out := map[string]SidebarRow{}
	q := SidebarQuery{Limit: 1, AllGroups: true}
	for {
		page, err := e.q.Sidebar(e.ctx, "default", reader.pk, q)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, r := range page.Channels {
			out[r.ChannelID] = r
		}
		if page.NextCursor == nil {
			return out
		}
		q.Cursor = *page.NextCursor
	}
}

func (e *env) intents(reader user, intents ...string) []string {
	e.t.Helper()
	raws := make([]json.RawMessage, len(intents))
	for i, s := range intents {
		raws[i] = json.RawMessage(s)
	}
	res, err := e.q.ApplyIntents(e.ctx, "default", reader.pk, raws, true)
	if err != nil {
		e.t.Fatal(err)
	}
	if res.ProjectionStatus != "not_requested" {
		e.t.Fatalf("projection_status %q", res.ProjectionStatus)
	}
	out := make([]string, len(res.Outcomes))
	for i, o := range res.Outcomes {
		out[i] = o.Status
	}
	return out
}

// Issue 52: the sidebar's counts follow Buzz's rules (sidebar.go) and the
// key's own marks, for the channels it joined, nothing else.
func TestSidebarCountsAndMarks(t *testing.T) {
	e, owner, ch := newChannelEnv(t)
	e.q.now = func() time.Time { return time.Unix(t0+3600, 0) }
	alice, bob := newUser(), newUser()
	e.addMember(owner, ch, alice)
	m1 := e.msg(owner, ch, t0+10, "one")
	m2 := e.submit(owner, 9, t0+11, "hi @alice", nostr.Tag{"h", ch}, nostr.Tag{"p", alice.pk})
	mine := e.msg(alice, ch, t0+12, "alice writes")
	conv := e.reply(owner, ch, mine, t0+13, "to alice", false) // conversation: alice wrote its parent
	e.reply(owner, ch, m1, t0+14, "not for alice", false)      // a reply without a reason: not unread
	bc := e.reply(owner, ch, m1, t0+15, "everyone", true)      // broadcast
	m3 := e.msg(owner, ch, t0+16, "three")
	e.submit(owner, 7, t0+17, "+", nostr.Tag{"h", ch}, nostr.Tag{"e", m3.ID}, nostr.Tag{"p", owner.pk}) // not eligible
	// A channel alice is not in, and one with a non-UUID id she is in.
	other := e.channel(owner)
	e.msg(owner, other, t0+20, "elsewhere")
	group := "flotilla_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	e.submit(owner, 9007, t0, "", nostr.Tag{"h", group})
	e.addMember(owner, group, alice)
	e.msg(owner, group, t0+21, "room")

	rows := e.sidebarOf(alice)
	if _, ok := rows[other]; ok {
		t.Fatal("a channel alice did not join is listed")
	}
	r := rows[ch]
	// Unread: m1, m2, m3 (top-level) + conv + bc (replies with a reason).
	// Attention: m2 (mention), conv, bc.
	if !exact(r.Unread, 5) || !exact(r.Attention, 3) {
		t.Fatalf("unread %v attention %v, want 5 and 3", *r.Unread.Value, *r.Attention.Value)
	}
	if r.LatestMessageID == nil || *r.LatestMessageID != m3.ID || *r.LatestMessageAt != t0+16 || !r.LatestMessageComplete {
		t.Fatalf("latest %v", r.LatestMessageID)
	}
	if len(r.Threads.Items) != 2 || !r.Threads.Complete || r.Threads.Items[0].RootID != m1.ID || r.Threads.Items[0].LatestReplyID != bc.ID ||
		r.Threads.Items[1].RootID != mine.ID || !exact(r.Threads.Items[1].Unread, 1) {
		t.Fatalf("threads %+v", r.Threads)
	}
	if gr, ok := rows[group]; !ok || !exact(gr.Unread, 1) {
		t.Fatal("with all_groups a NIP-29 group is listed with its count")
	}
	page, err := e.q.Sidebar(e.ctx, "default", alice.pk, SidebarQuery{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range page.Channels {
		if c.ChannelID == group {
			t.Fatal("without all_groups only UUID-named channels are listed (Buzz's app requires UUIDs)")
		}
	}
	// The owner's own messages never count for the owner.
	if o := e.sidebarOf(owner)[ch]; !exact(o.Unread, 1) { // alice's message
		t.Fatalf("owner unread %v", *o.Unread.Value)
	}

	// Marks: through m2 on the timeline, then the conversation's thread.
	got := e.intents(alice,
		fmt.Sprintf(`{"type":"mark_through","target":{"channel_id":%q},"message_id":%q}`, ch, m2.ID),
		fmt.Sprintf(`{"type":"mark_through","target":{"channel_id":%q,"root_id":%q},"message_id":%q}`, ch, mine.ID, conv.ID),
		fmt.Sprintf(`{"type":"mark_through","target":{"channel_id":%q},"message_id":%q}`, ch, m1.ID),    // older: kept, applied
		fmt.Sprintf(`{"type":"mark_through","target":{"channel_id":%q},"message_id":%q}`, other, m1.ID), // not hers
		fmt.Sprintf(`{"type":"mark_through","target":{"channel_id":%q},"message_id":%q}`, ch, strings.Repeat("a", 64)),
		`{"type":"mark_through","target":{"channel_id":"nope"},"message_id":"x"}`,
		`{"type":"mark_everything"}`)
	if want := []string{"applied", "applied", "applied", "blocked", "blocked", "invalid", "invalid"}; !slices.Equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	r = e.sidebarOf(alice)[ch]
	if !exact(r.Unread, 2) || !exact(r.Attention, 1) { // m3 and bc; bc is attention
		t.Fatalf("after marks: unread %d attention %d", *r.Unread.Value, *r.Attention.Value)
	}
	// The whole-channel cut through the latest reads everything.
	if got := e.intents(alice, fmt.Sprintf(`{"type":"mark_channel_read","channel_id":%q,"message_id":%q}`, ch, m3.ID)); got[0] != "applied" {
		t.Fatal(got)
	}
	if r = e.sidebarOf(alice)[ch]; !exact(r.Unread, 0) || !exact(r.Attention, 0) || len(r.Threads.Items) != 0 {
		t.Fatalf("after the cut: %+v", r)
	}
	// A new message counts again; bob's marks are his own.
	e.msg(owner, ch, t0+30, "four")
	if r = e.sidebarOf(alice)[ch]; !exact(r.Unread, 1) {
		t.Fatal("a message after the cut is unread")
	}
	e.addMember(owner, ch, bob)
	if b := e.sidebarOf(bob)[ch]; *b.Unread.Value != 6 { // m1, m2, mine, m3, four + bc
		t.Fatalf("bob's unread %d: alice's marks leaked", *b.Unread.Value)
	}

	// Contexts: each message's state, missing and not-yours alike.
	page2, err := e.q.Contexts(e.ctx, "default", alice.pk, []ContextQuery{
		{Target: ReadTarget{ChannelID: ch}, MessageIDs: []string{m1.ID, mine.ID, conv.ID, strings.Repeat("b", 64)}},
		{Target: ReadTarget{ChannelID: other}, MessageIDs: []string{m1.ID}},
		{Target: ReadTarget{ChannelID: ch, RootID: m1.ID}, MessageIDs: []string{bc.ID}},
	})
	if err != nil {
		t.Fatal(err)
	}
	states := func(c ContextState) []string {
		var s []string
		for _, m := range c.Messages {
			s = append(s, m.Status)
		}
		return s
	}
	if c := page2.Contexts[0]; c.Status != "available" || !slices.Equal(states(c), []string{"read", "not_counted", "unavailable", "unavailable"}) {
		t.Fatalf("channel context %+v", c)
	}
	if page2.Contexts[1].Status != "unavailable" {
		t.Fatal("a channel alice is not in is unavailable")
	}
	if c := page2.Contexts[2]; c.Status != "available" || !slices.Equal(states(c), []string{"read"}) {
		t.Fatalf("thread context %+v", c)
	}
}

// Archived channels stay listed with archived true; a left channel is gone.
func TestSidebarArchivedAndLeft(t *testing.T) {
	e, owner, ch := newChannelEnv(t)
	e.q.now = func() time.Time { return time.Unix(t0+3600, 0) }
	alice := newUser()
	e.addMember(owner, ch, alice)
	e.msg(owner, ch, t0+10, "x")
	e.submit(owner, 9002, t0+20, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "true"})
	if r := e.sidebarOf(alice)[ch]; !r.Archived || !exact(r.Unread, 1) {
		t.Fatalf("archived row %+v", r)
	}
	e.submit(owner, 9002, t0+30, "", nostr.Tag{"h", ch}, nostr.Tag{"archived", "false"})
	e.submit(alice, 9022, t0+31, "", nostr.Tag{"h", ch})
	if _, ok := e.sidebarOf(alice)[ch]; ok {
		t.Fatal("a channel left is no row")
	}
}

func TestParseSidebarQuery(t *testing.T) {
	id := uuid.NewString()
	cases := []struct {
		params map[string]string
		ok     bool
	}{
		{map[string]string{}, true},
		{map[string]string{"limit": "20"}, true},
		{map[string]string{"limit": "20", "cursor": id}, true},
		{map[string]string{"channel_ids": id + "," + uuid.NewString()}, true},
		{map[string]string{"limit": "0"}, false},
		{map[string]string{"limit": "21"}, false},
		{map[string]string{"limit": "1x"}, false},
		{map[string]string{"cursor": "general"}, false},
		{map[string]string{"cursor": "general", "all_groups": "1"}, true},
		{map[string]string{"channel_ids": id + "," + id}, false},
		{map[string]string{"channel_ids": id, "limit": "1"}, false},
		{map[string]string{"channel_ids": strings.Repeat(id+",", 20) + id}, false},
		{map[string]string{"page": "2"}, false},
		{map[string]string{"all_groups": "yes"}, false},
	}
	for _, c := range cases {
		_, err := ParseSidebarQuery(c.params)
		if (err == nil) != c.ok {
			t.Errorf("%v: err %v", c.params, err)
		}
		if r, ok := reject.As(err); err != nil && (!ok || r.Prefix != reject.Invalid) {
			t.Errorf("%v: %v is not invalid:", c.params, err)
		}
	}
}

func TestParseIntentsAndContexts(t *testing.T) {
	id := uuid.NewString()
	ev := strings.Repeat("c", 64)
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"intents":[{"type":"mark_channel_read","channel_id":"` + id + `","message_id":"` + ev + `"}]}`, true},
		{`{"intents":[]}`, false},
		{`{"intents":[{}],"extra":1}`, false},
		{`{"intents":[` + strings.TrimSuffix(strings.Repeat(`{},`, 101), ",") + `]}`, false},
		{`not json`, false},
	} {
		if _, err := ParseIntents([]byte(c.body)); (err == nil) != c.ok {
			t.Errorf("%.60s: %v", c.body, err)
		}
	}
	for _, c := range []struct {
		targets string
		ok      bool
	}{
		{`[{"target":{"channel_id":"` + id + `"},"message_ids":["` + ev + `"]}]`, true},
		{`[{"target":{"channel_id":"` + id + `","root_id":"` + ev + `"},"message_ids":[]}]`, true},
		{`[]`, false},
		{`[{"target":{"channel_id":"` + id + `","x":1},"message_ids":[]}]`, false},
		{`[{"target":{"channel_id":"` + id + `"},"message_ids":["short"]}]`, false},
	} {
		if _, err := ParseContexts(map[string]string{"targets": c.targets}, true); (err == nil) != c.ok {
			t.Errorf("%.60s: %v", c.targets, err)
		}
	}
}

// BenchmarkSidebar: one key in 200 channels holding 100,000 events (500
// each, seeded with COPY and analyzed), read marks in half of them; one
// sidebar page (20 rows, the app's page) and the whole sidebar (10 pages).
// Reports p50/p95 in ms:
//
//	source localdev/pg.sh && go test -run '^$' -bench BenchmarkSidebar -benchtime 200x ./shared/service/query/
func BenchmarkSidebar(b *testing.B) {
	ctx := context.Background()
	st, db := testkit.NewStoreDB(b, store.Options{MaxConns: 4})
	reader := newUser()
	now := time.Now().Unix()
	var chs []string
	for i := 0; i < 200; i++ {
		ch := uuid.NewString()
		if _, err := testkit.Seed(ctx, db, testkit.SeedOptions{Channel: ch, Events: 500, Start: now - 86400, PerSecond: 5, Seed: uint64(i + 1)}); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(ctx, `INSERT INTO channel_members (community_id, channel_id, pubkey, role, added_at) VALUES ('default', $1, $2, 'member', $3)`, ch, reader.pk, now); err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 { // a mark half way through the channel
			if _, err := db.Exec(ctx, `INSERT INTO read_marks (community_id, pubkey, channel_id, context, at, event_id)
SELECT 'default', $2, $1, '', created_at, id FROM events WHERE channel_id = $1 ORDER BY created_at, id OFFSET 250 LIMIT 1`, ch, reader.pk); err != nil {
				b.Fatal(err)
			}
		}
		chs = append(chs, ch)
	}
	if err := db.Analyze(ctx); err != nil {
		b.Fatal(err)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d events in %d channels", n, len(chs))
	q := New(st, nil)
	measure := func(b *testing.B, run func() error) {
		ds := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			t := time.Now()
			if err := run(); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms")
		b.ReportMetric(ms(ds[len(ds)*95/100]), "p95-ms")
	}
	b.Run("page", func(b *testing.B) {
		measure(b, func() error {
			page, err := q.Sidebar(ctx, "default", reader.pk, SidebarQuery{Limit: 20})
			if err == nil && len(page.Channels) != 20 {
				err = fmt.Errorf("%d rows", len(page.Channels))
			}
			return err
		})
	})
	b.Run("all-200", func(b *testing.B) {
		measure(b, func() error {
			q2, rows := SidebarQuery{Limit: 20}, 0
			for {
				page, err := q.Sidebar(ctx, "default", reader.pk, q2)
				if err != nil {
					return err
				}
				rows += len(page.Channels)
				if page.NextCursor == nil {
					break
				}
				q2.Cursor = *page.NextCursor
			}
			if rows != 200 {
				return fmt.Errorf("%d rows", rows)
			}
			return nil
		})
	})
}

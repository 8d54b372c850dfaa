package testkit

// Seeded channels: a synthetic channel bulk-loaded for query tests and
// benchmarks: top-level messages, replies with their thread metadata,
// reactions, edits and deletions, written with COPY (through dbtest) in the
// exact shape the write path stores (events, event_tags, thread_metadata,
// channels, channel_members). Event ids are real (NIP-01 hashes of the
// stored JSON); signatures are not, unless SeedOptions.Sign is set (the
// read path never verifies them).

import (
	"context"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/postgres/dbtest"
)

// SeedOptions describe one channel to load.
type SeedOptions struct {
	Community string // "default" when empty
	Channel   string // channel id (UUID)
	Events    int    // total events in the channel
	Start     int64  // created_at of the oldest event
	PerSecond int    // events sharing one created_at second (dense seconds)
	Authors   int    // distinct authors
	Seed      uint64 // PRNG seed: same options, same data
	Sign      bool   // real BIP-340 signatures (slow: about 60 µs each)
	Batch     int    // rows per COPY (default 50000)
}

// SeedResult says what was loaded.
type SeedResult struct {
	TopLevel, Replies, Reactions, Edits, Deletions int
	Oldest, Newest                                 int64
}

// Mix of a channel: of every 100 events, 70 top-level messages, 15
// replies, 11 reactions, 2 edits, 2 deletions (of a reaction or a message).
func seedPick(r *mrand.Rand) string {
	switch n := r.IntN(100); {
	case n < 70:
		return "msg"
	case n < 85:
		return "reply"
	case n < 96:
		return "reaction"
	case n < 98:
		return "edit"
	default:
		return "delete"
	}
}

type seedThread struct {
	channel              string
	createdAt            int64
	parent, root         string
	depth                int
	replies, descendants int
	lastReply            *int64
}

var seedWords = []string{"deploy", "review", "lunch", "standup", "incident", "release", "merge", "design", "bench", "postgres", "lambda", "relay", "thread", "window", "cursor"}

// Seed writes the channel (creating it, open, with its creator as owner)
// and returns counts. It does not ANALYZE; call st.Analyze after the last
// one.
func Seed(ctx context.Context, db *dbtest.DB, o SeedOptions) (*SeedResult, error) {
	if o.Community == "" {
		o.Community = "default"
	}
	if o.PerSecond <= 0 {
		o.PerSecond = 5
	}
	if o.Authors <= 0 {
		o.Authors = 50
	}
	if o.Batch <= 0 {
		o.Batch = 50000
	}
	r := mrand.New(mrand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	keys := make([]string, o.Authors)
	pubs := make([]string, o.Authors)
	for i := range keys {
		keys[i] = nostr.GeneratePrivateKey()
		pk, err := nostr.GetPublicKey(keys[i])
		if err != nil {
			return nil, fmt.Errorf("seed: key: %w", err)
		}
		pubs[i] = pk
	}
	creator := pubs[0]
	if err := db.BulkChannel(ctx, o.Community, o.Channel, "seed-"+o.Channel[:8], creator, randomHex(32), o.Start); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}

	res := &SeedResult{Oldest: o.Start}
	var events []dbtest.BulkEvent
	threads := map[string]*seedThread{}
	var order []string  // thread_metadata rows in insert order
	var recent []string // recent messages (reply and reaction targets)
	var auxIDs []string // recent reactions (deletion targets)
	deleted := map[string]int64{}
	flush := func(final bool) error {
		if len(events) >= o.Batch || (final && len(events) > 0) {
			if err := db.BulkEvents(ctx, o.Community, o.Channel, events); err != nil {
				return fmt.Errorf("seed: %w", err)
			}
			events = events[:0]
		}
		return nil
	}
	// Deletions are applied after the copy (an UPDATE of deleted_at), as
	// the write path marks its targets.
	for i := 0; i < o.Events; i++ {
		at := o.Start + int64(i/o.PerSecond)
		res.Newest = at
		a := r.IntN(o.Authors)
		ev := &nostr.Event{PubKey: pubs[a], CreatedAt: nostr.Timestamp(at), Tags: nostr.Tags{}}
		what := seedPick(r)
		if len(recent) == 0 {
			what = "msg"
		}
		var th *seedThread
		search := true
		switch what {
		case "msg":
			ev.Kind = 9
			ev.Tags = append(ev.Tags, nostr.Tag{"h", o.Channel})
			th = &seedThread{channel: o.Channel, createdAt: at}
			res.TopLevel++
		case "reply":
			parent := recent[r.IntN(len(recent))]
			p := threads[parent]
			root := p.root
			if p.depth == 0 {
				root = parent
			}
			ev.Kind = 9
			ev.Tags = append(ev.Tags, nostr.Tag{"h", o.Channel}, nostr.Tag{"e", root, "", "root"}, nostr.Tag{"e", parent, "", "reply"})
			th = &seedThread{channel: o.Channel, createdAt: at, parent: parent, root: root, depth: min(p.depth+1, 100)}
			res.Replies++
		case "reaction":
			target := recent[r.IntN(len(recent))]
			ev.Kind = 7
			ev.Content = "+"
			ev.Tags = append(ev.Tags, nostr.Tag{"e", target}, nostr.Tag{"p", pubs[r.IntN(o.Authors)]})
			search = false
			res.Reactions++
		case "edit":
			target := recent[r.IntN(len(recent))]
			ev.Kind = 40003
			ev.Tags = append(ev.Tags, nostr.Tag{"e", target}, nostr.Tag{"h", o.Channel})
			res.Edits++
		case "delete":
			var target string
			if len(auxIDs) > 0 && r.IntN(2) == 0 {
				target = auxIDs[r.IntN(len(auxIDs))]
			} else {
				target = recent[r.IntN(len(recent))]
			}
			if _, done := deleted[target]; done {
				target = recent[r.IntN(len(recent))]
			}
			ev.Kind = 5
			ev.Tags = append(ev.Tags, nostr.Tag{"e", target})
			search = false
			deleted[target] = at
			res.Deletions++
		}
		if ev.Kind == 9 || ev.Kind == 40003 {
			ev.Content = seedWords[r.IntN(len(seedWords))] + " " + seedWords[r.IntN(len(seedWords))] + " " + fmt.Sprint(i)
		}
		if o.Sign {
			if err := ev.Sign(keys[a]); err != nil {
				return nil, fmt.Errorf("seed: sign: %w", err)
			}
		} else {
			ev.ID = ev.GetID()
			ev.Sig = randomHexFrom(r, 64)
		}
		topLevel := th == nil || th.depth == 0
		row := dbtest.BulkEvent{ID: ev.ID, Pubkey: ev.PubKey, CreatedAt: at, Kind: ev.Kind, TopLevel: topLevel, Raw: ev.String()}
		if search {
			row.Search = tsvector(ev.Content)
		}
		for _, t := range ev.Tags {
			if len(t) >= 2 { // dbtest.BulkEvents keeps the indexed ones
				row.Tags = append(row.Tags, [2]string{t[0], t[1]})
			}
		}
		events = append(events, row)
		if th != nil {
			threads[ev.ID] = th
			order = append(order, ev.ID)
			recent = append(recent, ev.ID)
			if len(recent) > 200 {
				recent = recent[1:]
			}
			if th.parent != "" {
				threads[th.parent].replies++
				for anc := th.parent; anc != ""; anc = threads[anc].parent {
					threads[anc].descendants++
					last := at
					threads[anc].lastReply = &last
				}
			}
		}
		if ev.Kind == 7 {
			auxIDs = append(auxIDs, ev.ID)
			if len(auxIDs) > 200 {
				auxIDs = auxIDs[1:]
			}
		}
		if err := flush(false); err != nil {
			return nil, err
		}
	}
	if err := flush(true); err != nil {
		return nil, err
	}
	rows := make([]dbtest.BulkThread, 0, len(order))
	for _, id := range order {
		t := threads[id]
		rows = append(rows, dbtest.BulkThread{EventID: id, CreatedAt: t.createdAt, Parent: t.parent, Root: t.root, Depth: t.depth,
			Replies: t.replies, Descendant: t.descendants, LastReplyAt: t.lastReply})
	}
	if err := db.BulkThreads(ctx, o.Community, o.Channel, rows); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	if err := db.BulkDeleted(ctx, o.Community, deleted); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	return res, nil
}

// SeedChannel is Seed failing t on error.
func SeedChannel(t testing.TB, db *dbtest.DB, o SeedOptions) *SeedResult {
	t.Helper()
	res, err := Seed(context.Background(), db, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Analyze refreshes the planner statistics after seeding, failing t on
// error.
func Analyze(t testing.TB, db *dbtest.DB) {
	t.Helper()
	if err := db.Analyze(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// tsvector renders to_tsvector('simple', s) for the seed's plain lowercase
// words, as a tsvector literal COPY accepts.
func tsvector(s string) string {
	pos := map[string][]string{}
	var order []string
	for i, w := range strings.Fields(s) {
		if _, ok := pos[w]; !ok {
			order = append(order, w)
		}
		pos[w] = append(pos[w], strconv.Itoa(i+1))
	}
	parts := make([]string, 0, len(order))
	for _, w := range order {
		parts = append(parts, "'"+w+"':"+strings.Join(pos[w], ","))
	}
	return strings.Join(parts, " ")
}

func randomHexFrom(r *mrand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return hex.EncodeToString(b)
}

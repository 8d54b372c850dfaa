// Package seed bulk-loads a synthetic channel for benchmarks: top-level
// messages, replies with their thread metadata, reactions, edits and
// deletions, written with COPY in the exact shape the write path stores
// (events, event_tags, thread_metadata, channels, channel_members), then
// ANALYZE. Event ids are real (NIP-01 hashes of the stored JSON); signatures
// are not, unless Options.Sign is set (the read path never verifies them).
package seed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nbd-wtf/go-nostr"
)

// Options describe one channel to load.
type Options struct {
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

// Result says what was loaded.
type Result struct {
	TopLevel, Replies, Reactions, Edits, Deletions int
	Oldest, Newest                                 int64
}

// Mix of a channel: of every 100 events, 70 top-level messages, 15
// replies, 11 reactions, 2 edits, 2 deletions (of a reaction or a message).
func pick(r *mrand.Rand) string {
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

type thread struct {
	channel              string
	createdAt            int64
	parent, root         string
	depth                int
	replies, descendants int
	lastReply            *int64
}

var words = []string{"deploy", "review", "lunch", "standup", "incident", "release", "merge", "design", "bench", "postgres", "lambda", "relay", "thread", "window", "cursor"}

// Load writes the channel (creating it, open, with its creator as owner)
// and returns counts. It does not ANALYZE; call Analyze after the last Load.
func Load(ctx context.Context, pool *pgxpool.Pool, o Options) (*Result, error) {
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
	if _, err := pool.Exec(ctx, `INSERT INTO channels (community_id, id, name, channel_type, visibility, creator, created_at, create_event)
VALUES ($1, $2, $3, 'stream', 'open', $4, $5, $6) ON CONFLICT DO NOTHING`,
		o.Community, o.Channel, "seed-"+o.Channel[:8], creator, o.Start, randomHex(32)); err != nil {
		return nil, fmt.Errorf("seed: channel: %w", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO channel_members (community_id, channel_id, pubkey, role, added_at)
VALUES ($1, $2, $3, 'owner', $4) ON CONFLICT DO NOTHING`, o.Community, o.Channel, creator, o.Start); err != nil {
		return nil, fmt.Errorf("seed: owner: %w", err)
	}

	res := &Result{Oldest: o.Start}
	var events, tags [][]any
	threads := map[string]*thread{}
	var order []string  // thread_metadata rows in insert order
	var recent []string // recent messages (reply and reaction targets)
	var auxIDs []string // recent reactions (deletion targets)
	deleted := map[string]int64{}
	flush := func(final bool) error {
		if len(events) >= o.Batch || (final && len(events) > 0) {
			if _, err := pool.CopyFrom(ctx, pgx.Identifier{"events"},
				[]string{"community_id", "id", "pubkey", "created_at", "kind", "channel_id", "top_level", "deleted_at", "raw", "search"},
				pgx.CopyFromRows(events)); err != nil {
				return fmt.Errorf("seed: copy events: %w", err)
			}
			if _, err := pool.CopyFrom(ctx, pgx.Identifier{"event_tags"},
				[]string{"community_id", "event_id", "name", "value", "kind", "created_at", "channel_id"},
				pgx.CopyFromRows(tags)); err != nil {
				return fmt.Errorf("seed: copy event_tags: %w", err)
			}
			events, tags = events[:0], tags[:0]
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
		what := pick(r)
		if len(recent) == 0 {
			what = "msg"
		}
		var th *thread
		search := true
		switch what {
		case "msg":
			ev.Kind = 9
			ev.Tags = append(ev.Tags, nostr.Tag{"h", o.Channel})
			th = &thread{channel: o.Channel, createdAt: at}
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
			th = &thread{channel: o.Channel, createdAt: at, parent: parent, root: root, depth: min(p.depth+1, 100)}
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
			ev.Content = words[r.IntN(len(words))] + " " + words[r.IntN(len(words))] + " " + fmt.Sprint(i)
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
		var content any
		if search {
			content = tsvector(ev.Content)
		}
		events = append(events, []any{o.Community, ev.ID, ev.PubKey, at, ev.Kind, o.Channel, topLevel, nil, ev.String(), content})
		for _, t := range ev.Tags {
			if len(t) >= 2 && len(t[0]) == 1 {
				tags = append(tags, []any{o.Community, ev.ID, t[0], t[1], ev.Kind, at, o.Channel})
			}
		}
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
	rows := make([][]any, 0, len(order))
	for _, id := range order {
		t := threads[id]
		rows = append(rows, []any{o.Community, id, t.channel, t.createdAt, nullable(t.parent), nullable(t.root), t.depth, false,
			t.replies, t.descendants, t.lastReply})
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"thread_metadata"},
		[]string{"community_id", "event_id", "channel_id", "created_at", "parent_id", "root_id", "depth", "broadcast", "reply_count", "descendant_count", "last_reply_at"},
		pgx.CopyFromRows(rows)); err != nil {
		return nil, fmt.Errorf("seed: copy thread_metadata: %w", err)
	}
	ids := make([]string, 0, len(deleted))
	ats := make([]int64, 0, len(deleted))
	for id, at := range deleted {
		ids = append(ids, id)
		ats = append(ats, at)
	}
	if _, err := pool.Exec(ctx, `UPDATE events e SET deleted_at = d.at FROM unnest($2::text[], $3::bigint[]) AS d(id, at)
WHERE e.community_id = $1 AND e.id = d.id`, o.Community, ids, ats); err != nil {
		return nil, fmt.Errorf("seed: mark deleted: %w", err)
	}
	return res, nil
}

// Analyze refreshes the planner statistics of the tables Load writes.
func Analyze(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, `ANALYZE events, event_tags, thread_metadata, channels, channel_members`); err != nil {
		return fmt.Errorf("seed: analyze: %w", err)
	}
	return nil
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

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func randomHexFrom(r *mrand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return hex.EncodeToString(b)
}

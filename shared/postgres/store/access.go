package store

import (
	"context"
	"slices"
	"strings"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
)

// The SQL twin of shared/domain/access: every read path (plain, window, thread,
// aux, COUNT, search, live delivery through Readable) builds its access
// predicate from these three clauses, and access/testdata/cases.json runs
// against them (access_test.go) as against the Go rule.

// activeMember is "an active member" of a channel: its channel_members
// row not removed. Every statement about membership says it with this
// constant (after the row's alias: "m." + activeMember), the access rule's
// twin below included, which access/testdata/cases.json holds to the Go
// rule; TestActiveMemberWrittenOnce fails on a second spelling.
const activeMember = `removed_at IS NULL`

// notDeleted is "not deleted" of a row with a deleted_at (an event, a
// channel): every statement that reads only the live rows says it with
// this constant after the row's alias ("e." + notDeleted), the access
// rule's twin below included (a deleted channel reaches no one, held to
// access/testdata/cases.json); TestNotDeletedWrittenOnce fails on a second
// spelling.
const notDeleted = `deleted_at IS NULL`

// unexpiredAt is "row alias (with its dot, or "") has not expired at the
// time bound at now": no expires_at, or one after now. (unexpiredSQL below
// is the same of an event at the statement's own clock.)
func unexpiredAt(alias, now string) string {
	return "(" + alias + "expires_at IS NULL OR " + alias + "expires_at > " + now + ")"
}

// reachesSQL is access.Reaches on channel row c for the reader bound at
// reader: not deleted, open or with the reader as an active member. (The row
// existing is the caller's EXISTS.)
func reachesSQL(reader string) string {
	return `c.` + notDeleted + `
    AND (c.visibility = 'open' OR ` + memberSQL(reader) + `)`
}

// memberSQL is "the reader bound at reader is an active member of channel
// row c".
func memberSQL(reader string) string {
	return `EXISTS (
      SELECT 1 FROM channel_members m
      WHERE m.community_id = c.community_id AND m.channel_id = c.id
        AND m.pubkey = ` + reader + ` AND m.` + activeMember + `)`
}

// metadataReachesSQL is access.MetadataReaches on channel row c: not
// deleted, not hidden or with the reader as an active member.
func metadataReachesSQL(reader string) string {
	return `c.` + notDeleted + `
    AND (NOT c.hidden OR ` + memberSQL(reader) + `)`
}

// channelStateKinds is kinds.ChannelState's kinds (stateKinds) as an SQL
// list.
var (
	stateKinds        = kinds.Where(func(k kinds.Kind) bool { return k.ChannelState })
	channelStateKinds = sqlKinds(stateKinds)
)

// showsSQL is access.Shows on channel row c: a system channel only when it
// is one of named (a text[] placeholder: the channels the filter names).
func showsSQL(named string) string {
	return `(c.channel_type <> 'system' OR c.id = ANY(` + named + `::text[]))`
}

// mayReadSQL is access.MayRead of the channel at ch (an SQL expression).
func mayReadSQL(b *sqlb, ch, named string) string {
	return `EXISTS (SELECT 1 FROM channels c
  WHERE c.community_id = ` + pCommunity + ` AND c.id = ` + ch + `
    AND ` + showsSQL(named) + `
    AND ` + reachesSQL(b.readerArg()) + `)`
}

// recipientOnly, authorOnly and sharedGated are kinds.RecipientOnlyKinds,
// AuthorOnlyKinds and SharedGatedKinds as SQL lists (the kinds access.MaySee
// gates by reader whatever their channel); readerGated is the first two.
var (
	recipientOnlyKinds = kinds.RecipientOnlyKinds()
	authorOnlyKinds    = kinds.AuthorOnlyKinds()
	sharedGatedKinds   = kinds.SharedGatedKinds()
	recipientOnly      = sqlKinds(recipientOnlyKinds)
	authorOnly         = sqlKinds(authorOnlyKinds)
	sharedGated        = sqlKinds(sharedGatedKinds)
	readerGated        = sqlKinds(slices.Concat(recipientOnlyKinds, authorOnlyKinds))
)

func sqlKinds(ks []int) string { return "(" + sqlInts(ks, ", ") + ")" }

// sharedSQL is kinds.Shared on events e: exactly one tag named shared, and
// it is ["shared","true"] (read from the stored JSON; only evaluated for
// the shared-gated kinds, whose ingest refuses any other shape).
const sharedSQL = `COALESCE((SELECT count(*) = 1 AND bool_and(jsonb_array_length(t) = 2 AND t->>1 = 'true')
    FROM jsonb_array_elements((e.raw::jsonb)->'tags') t WHERE t->>0 = 'shared'), false)`

// maySeeSQL is access.Unexpired (unexpiredSQL) and access.MaySee on events
// e for a filter naming the channels named: recipient-only kinds only for
// their p, author-only kinds only for their author, shared-gated kinds for
// their author or when shared, then
// events outside any channel and events of channels the reader may read
// (access.MayReadKind: the channel-state kinds by the hidden flag, the
// others by private).
//
// With ks, the filter's kinds (the statement also holds e.kind = ANY(ks)),
// only the branches some kind of ks can take are written: the same rule
// for those rows, a statement the planner plans in a fraction of the time
// (a REQ for kind 9 plans one channel branch instead of five). Nil ks: all.
// With within, the channels the statement already limits e.channel_id to
// (a filter's #h), the channel subqueries read those channels' rows only,
// not every channel of the community.
func maySeeSQL(b *sqlb, named []string, ks []int, within []string) string {
	g := kindGates(ks)
	return unexpiredSQL + "\n  AND " + gatedSQL(b, g, func() string {
		shows := showsSQL(b.arg(nonNil(named)))
		if within != nil {
			shows += "\n    AND c.id = ANY(" + b.arg(within) + "::text[])"
		}
		inChannel := []string{"e.channel_id IS NULL"}
		if g.other {
			inChannel = append(inChannel, channelBranch(g.state, "NOT IN", shows, reachesSQL(b.readerArg())))
		}
		if g.state {
			inChannel = append(inChannel, channelBranch(g.other, "IN", shows, metadataReachesSQL(b.readerArg())))
		}
		return "(" + strings.Join(inChannel, "\n  OR ") + ")"
	})
}

// maySeeReadableSQL is maySeeSQL on the timeline rows (never a channel-state
// kind) of one channel the reader may read through a filter naming it, as
// the statement's caller has established in the same snapshot (CanRead,
// CanReadWindow) or the statement itself holds (mayReadSQL): access.MaySee
// with channelReadable true, so only the reader gates of the kinds ks can
// take are written beside unexpiredSQL, and unexpiredSQL alone when they
// take none (a window of kind 9).
func maySeeReadableSQL(b *sqlb, ks []int) string {
	g := kindGates(ks)
	if !g.recipient && !g.author && !g.shared {
		return unexpiredSQL
	}
	return unexpiredSQL + "\n  AND " + gatedSQL(b, g, nil)
}

// unexpiredSQL is access.Unexpired on events e (NIP-40): no expiration, or
// one still ahead of the statement's clock (now(): the transaction's start,
// so one snapshot reads one clock). It leads both maySeeSQL and
// maySeeReadableSQL, which every read path's statement holds (plain, COUNT,
// search, aux, window, thread window, thread panel and their root probes):
// an expired event is served by none, whether or not the sweep has removed
// it yet.
const unexpiredSQL = `(e.expires_at IS NULL OR e.expires_at > floor(extract(epoch FROM now()))::bigint)`

// gatedSQL is the rule of maySeeSQL for the branches g: the reader gates of
// the kinds, and for the kinds no reader gate takes whole, inChannel's
// condition on their channel (nil: none, the channel is readable).
func gatedSQL(b *sqlb, g gates, inChannel func() string) string {
	var general []string
	if g.recipient || g.author {
		general = append(general, "e.kind NOT IN "+readerGated)
	}
	if g.shared {
		general = append(general, "(e.kind NOT IN "+sharedGated+" OR e.pubkey = "+b.readerArg()+
			" OR CASE WHEN e.kind IN "+sharedGated+" THEN "+sharedSQL+" ELSE false END)")
	}
	var branches []string
	if g.other || g.state {
		if inChannel != nil {
			general = append(general, inChannel())
		}
		if len(general) == 0 {
			general = append(general, "true")
		}
		branches = append(branches, "("+and(general)+")")
	}
	if g.author {
		branches = append(branches, "(e.kind IN "+authorOnly+" AND e.pubkey = "+b.readerArg()+")")
	}
	if g.recipient {
		branches = append(branches, `(e.kind IN `+recipientOnly+` AND e.id IN (
    SELECT p.event_id FROM event_tags p WHERE p.community_id = `+pCommunity+`
      AND p.name = 'p' AND p.value = `+b.readerArg()+` AND p.kind IN `+recipientOnly+`))`)
	}
	if len(branches) == 0 {
		return "false"
	}
	return "(" + strings.Join(branches, "\n  OR ") + ")"
}

// channelBranch is maySeeSQL's channel branch of the kinds "e.kind <op>
// channelStateKinds" (the test left out when guarded is false: every kind
// of the filter is of this branch), whose channel shows and reaches (both
// conditions on channel row c).
func channelBranch(guarded bool, op, shows, reach string) string {
	guard := ""
	if guarded {
		guard = "e.kind " + op + " " + channelStateKinds + " AND "
	}
	return "(" + guard + `e.channel_id IN (SELECT c.id FROM channels c
  WHERE c.community_id = ` + pCommunity + `
    AND ` + shows + `
    AND ` + reach + `))`
}

// gates says which of maySeeSQL's branches the kinds of a filter can take.
type gates struct {
	recipient, author, shared bool // kinds.RecipientOnly, AuthorOnly, SharedGated
	state, other              bool // channel-state kinds; every other kind not reader-gated
}

// kindGates are the branches kinds ks can take, by the same kind lists
// the predicate's SQL spells; nil or empty ks: all.
func kindGates(ks []int) gates {
	if len(ks) == 0 {
		return gates{true, true, true, true, true}
	}
	var g gates
	for _, k := range ks {
		switch {
		case slices.Contains(recipientOnlyKinds, k):
			g.recipient = true
		case slices.Contains(authorOnlyKinds, k):
			g.author = true
		default:
			g.shared = g.shared || slices.Contains(sharedGatedKinds, k)
			state := slices.Contains(stateKinds, k)
			g.state = g.state || state
			g.other = g.other || !state
		}
	}
	return g
}

// ChannelsCheckReadable answers access.Reaches for many (channel, reader) pairs in one
// statement: live fan-out re-checks every subscriber of an event at once
// and applies access.Shows (the filter naming a system channel) per filter.
func (s *Store) ChannelsCheckReadable(ctx context.Context, community string, pairs []records.ReadPair) (map[records.ReadPair]bool, error) {
	return s.pairsWhere(ctx, community, pairs, "check read access", `SELECT 1 FROM channels c
  WHERE c.community_id = $1 AND c.id = x.ch
    AND `+reachesSQL("x.rd"))
}

// ChannelMembersCheckEver reports, for each pair, whether reader has ever been a member
// of channel (removed or not): who may be told that access ended.
func (s *Store) ChannelMembersCheckEver(ctx context.Context, community string, pairs []records.ReadPair) (map[records.ReadPair]bool, error) {
	return s.pairsWhere(ctx, community, pairs, "membership history", `SELECT 1 FROM channel_members m
  WHERE m.community_id = $1 AND m.channel_id = x.ch AND m.pubkey = x.rd`)
}

// pairsWhere returns the pairs x(ch, rd) for which EXISTS (exists) holds,
// in one statement.
func (s *Store) pairsWhere(ctx context.Context, community string, pairs []records.ReadPair, what, exists string) (map[records.ReadPair]bool, error) {
	out := make(map[records.ReadPair]bool, len(pairs))
	if len(pairs) == 0 {
		return out, nil
	}
	chs := make([]string, len(pairs))
	rds := make([]string, len(pairs))
	for i, p := range pairs {
		chs[i], rds[i] = p.Channel, p.Reader
	}
	rows, err := s.pool.Query(ctx, `SELECT x.ch, x.rd FROM unnest($2::text[], $3::text[]) AS x(ch, rd)
WHERE EXISTS (`+exists+`)`, community, chs, rds)
	if err != nil {
		return nil, errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var p records.ReadPair
		if err := rows.Scan(&p.Channel, &p.Reader); err != nil {
			return nil, errorf("%s: %w", what, err)
		}
		out[p] = true
	}
	if err := rows.Err(); err != nil {
		return nil, errorf("%s: %w", what, err)
	}
	return out, nil
}

// ChannelsCheckMetadataReadable answers access.MetadataReaches for many (channel, reader)
// pairs in one statement: live delivery of the channel-state kinds
// (39000-39003), which follow NIP-29's hidden flag, not private.
func (s *Store) ChannelsCheckMetadataReadable(ctx context.Context, community string, pairs []records.ReadPair) (map[records.ReadPair]bool, error) {
	return s.pairsWhere(ctx, community, pairs, "check metadata access", `SELECT 1 FROM channels c
  WHERE c.community_id = $1 AND c.id = x.ch
    AND `+metadataReachesSQL("x.rd"))
}

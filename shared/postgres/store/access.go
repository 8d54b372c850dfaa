package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// The SQL twin of shared/domain/access: every read path (plain, window, thread,
// aux, COUNT, search, live delivery through Readable) builds its access
// predicate from these three clauses, and access/testdata/cases.json runs
// against them (access_test.go) as against the Go rule.

// reachesSQL is access.Reaches on channel row c for the reader bound at
// reader: not deleted, open or with the reader as an active member. (The row
// existing is the caller's EXISTS.)
func reachesSQL(reader string) string {
	return `c.deleted_at IS NULL
    AND (c.visibility = 'open' OR EXISTS (
      SELECT 1 FROM channel_members m
      WHERE m.community_id = c.community_id AND m.channel_id = c.id
        AND m.pubkey = ` + reader + ` AND m.removed_at IS NULL))`
}

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
// gates by reader whatever their channel); gated is the three together.
var (
	recipientOnly = sqlKinds(kinds.RecipientOnlyKinds())
	authorOnly    = sqlKinds(kinds.AuthorOnlyKinds())
	sharedGated   = sqlKinds(kinds.SharedGatedKinds())
	readerGated   = sqlKinds(append(kinds.RecipientOnlyKinds(), kinds.AuthorOnlyKinds()...))
)

func sqlKinds(ks []int) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = strconv.Itoa(k)
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// sharedSQL is kinds.Shared on events e: exactly one tag named shared, and
// it is ["shared","true"] (read from the stored JSON; only evaluated for
// the shared-gated kinds, whose ingest refuses any other shape).
const sharedSQL = `COALESCE((SELECT count(*) = 1 AND bool_and(jsonb_array_length(t) = 2 AND t->>1 = 'true')
    FROM jsonb_array_elements((e.raw::jsonb)->'tags') t WHERE t->>0 = 'shared'), false)`

// maySeeSQL is access.MaySee on events e for a filter naming the channels
// named: recipient-only kinds only for their p, author-only kinds only for
// their author, shared-gated kinds for their author or when shared, then
// events outside any channel and events of channels the reader may read.
func maySeeSQL(b *sqlb, named []string) string {
	n := b.arg(nonNil(named))
	return `((e.kind NOT IN ` + readerGated + `
  AND (e.kind NOT IN ` + sharedGated + ` OR e.pubkey = ` + b.readerArg() + ` OR CASE WHEN e.kind IN ` + sharedGated + ` THEN ` + sharedSQL + ` ELSE false END)
  AND (e.channel_id IS NULL OR e.channel_id IN (SELECT c.id FROM channels c
  WHERE c.community_id = ` + pCommunity + `
    AND ` + showsSQL(n) + `
    AND ` + reachesSQL(b.readerArg()) + `)))
  OR (e.kind IN ` + authorOnly + ` AND e.pubkey = ` + b.readerArg() + `)
  OR (e.kind IN ` + recipientOnly + ` AND e.id IN (
    SELECT p.event_id FROM event_tags p WHERE p.community_id = ` + pCommunity + `
      AND p.name = 'p' AND p.value = ` + b.readerArg() + ` AND p.kind IN ` + recipientOnly + `)))`
}

// Rule is the channel as the access rule sees it; a nil row is a channel
// that does not exist.
func (c *ChannelRow) Rule() access.Channel {
	if c == nil {
		return access.Channel{}
	}
	return access.Channel{Exists: true, Deleted: c.Deleted, Open: c.Visibility == "open", System: c.Type == "system"}
}

// ReadPair is one (channel, reader) question for Readable.
type ReadPair struct{ Channel, Reader string }

// Readable answers access.Reaches for many (channel, reader) pairs in one
// statement: live fan-out re-checks every subscriber of an event at once
// and applies access.Shows (the filter naming a system channel) per filter.
func (s *Store) Readable(ctx context.Context, community string, pairs []ReadPair) (map[ReadPair]bool, error) {
	return s.pairsWhere(ctx, community, pairs, "check read access", `SELECT 1 FROM channels c
  WHERE c.community_id = $1 AND c.id = x.ch
    AND `+reachesSQL("x.rd"))
}

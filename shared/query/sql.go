package query

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/buzzrelay/relay/shared/eventcheck"
	"github.com/buzzrelay/relay/shared/reject"
)

// sqlb builds one parameterized statement: SQL structure comes from the
// fixed clauses below, every value goes through arg. $1 is always the
// community; the reader is bound on first use.
type sqlb struct {
	args    []any
	reader  string
	readerP string
}

func newSQL(community, reader string) *sqlb {
	return &sqlb{args: []any{community}, reader: reader}
}

// readerArg returns the reader's placeholder.
func (b *sqlb) readerArg() string {
	if b.readerP == "" {
		b.readerP = b.arg(b.reader)
	}
	return b.readerP
}

// arg binds v and returns its placeholder.
func (b *sqlb) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

const pCommunity = "$1"

// auxKinds are the hop-1 closure kinds; auxDeleteKinds the hop-2 ones.
var (
	auxKinds       = []int{5, 7, 9005, 40003}
	auxDeleteKinds = []int{5, 9005}
)

// notRowKinds is the fixed predicate every window read carries; the
// events_window partial index (migrations/002_query.sql) has the same text,
// so the planner can prove the index applies. Aux kinds and relay-signed
// state are never timeline rows.
const notRowKinds = `e.kind <> ALL ('{5,7,9005,40003,39000,39001,39002,39003,39005,39006,44100,44101}'::integer[])`

// readableChannels is the set of channels reader may read: existing, not
// deleted, open or with reader as an active member. System channels are in it
// only when named (the NIP-CL rule, decided per filter).
func readableChannels(b *sqlb, named string) string {
	return `SELECT c.id FROM channels c
  WHERE c.community_id = ` + pCommunity + ` AND c.deleted_at IS NULL
    AND (c.channel_type <> 'system' OR c.id = ANY(` + named + `::text[]))
    AND (c.visibility = 'open' OR EXISTS (
      SELECT 1 FROM channel_members m
      WHERE m.community_id = c.community_id AND m.channel_id = c.id
        AND m.pubkey = ` + b.readerArg() + ` AND m.removed_at IS NULL))`
}

// recipientOnly is eventcheck.RecipientOnly as an SQL list.
var recipientOnly = func() string {
	s := make([]string, len(eventcheck.RecipientOnly))
	for i, k := range eventcheck.RecipientOnly {
		s[i] = strconv.Itoa(k)
	}
	return "(" + strings.Join(s, ", ") + ")"
}()

// accessClause limits events e to what reader may read: events outside any
// channel, events of readable channels, and the recipient-only kinds only
// for their p.
func accessClause(b *sqlb, named []string) string {
	n := b.arg(nonNil(named))
	return `((e.kind NOT IN ` + recipientOnly + ` AND (e.channel_id IS NULL OR e.channel_id IN (` + readableChannels(b, n) + `)))
  OR (e.kind IN ` + recipientOnly + ` AND e.id IN (
    SELECT p.event_id FROM event_tags p WHERE p.community_id = ` + pCommunity + `
      AND p.name = 'p' AND p.value = ` + b.readerArg() + ` AND p.kind IN ` + recipientOnly + `)))`
}

// channelReadable is true when reader may read the channel bound at ch; a
// system channel only when it is one of named (a text[] placeholder: the
// channels the filter names, NIP-CL).
func channelReadable(b *sqlb, ch, named string) string {
	return `EXISTS (SELECT 1 FROM channels c
  WHERE c.community_id = ` + pCommunity + ` AND c.id = ` + ch + ` AND c.deleted_at IS NULL
    AND (c.channel_type <> 'system' OR c.id = ANY(` + named + `::text[]))
    AND (c.visibility = 'open' OR EXISTS (
      SELECT 1 FROM channel_members m
      WHERE m.community_id = c.community_id AND m.channel_id = c.id
        AND m.pubkey = ` + b.readerArg() + ` AND m.removed_at IS NULL)))`
}

// canRead reports whether the reader may read channel when the filter
// names the channels named.
func (r *reader) canRead(ctx context.Context, channel string, named []string) (bool, error) {
	b := newSQL(r.community, r.pubkey)
	var ok bool
	if err := r.queryRow(ctx, "SELECT "+channelReadable(b, b.arg(channel), b.arg(nonNil(named))), b.args...).Scan(&ok); err != nil {
		return false, fmt.Errorf("query: can read %s: %w", channel, err)
	}
	return ok, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// keyset adds the (created_at DESC, id ASC) "strictly after" condition of a
// cursor (until, beforeID) on alias e. The created_at <= bound gives the
// index a range; the OR settles ties inside the cursor's second.
func keyset(b *sqlb, until int64, beforeID string) string {
	u := b.arg(until)
	id := b.arg(beforeID)
	return `e.created_at <= ` + u + ` AND (e.created_at < ` + u + ` OR (e.created_at = ` + u + ` AND e.id > ` + id + `))`
}

func and(conds []string) string {
	return strings.Join(conds, "\n  AND ")
}

func reasonOf(err error) string {
	if r, ok := reject.As(err); ok {
		return r.Reason
	}
	return err.Error()
}

package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
)

// sqlb builds one parameterized read statement: SQL structure comes from
// the fixed clauses of the read files, every value goes through arg. $1 is
// always the community; the reader is bound on first use.
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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func and(conds []string) string {
	return strings.Join(conds, "\n  AND ")
}

// sqlInts spells ks in SQL, joined by sep: the kinds' tables as fixed
// statement text.
func sqlInts(ks []int, sep string) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = strconv.Itoa(k)
	}
	return strings.Join(s, sep)
}

// keysetOrder is the order of every page of events e a read returns,
// newest first: the keyset a Cursor is a position in.
const keysetOrder = "e.created_at DESC, e.id ASC"

// rowsSQL is the statement of a page of rows: the events e matching where
// in keysetOrder (led by lead, when not ""), at most limit of them.
func rowsSQL(where, lead, limit string) string {
	order := keysetOrder
	if lead != "" {
		order = lead + ", " + order
	}
	return "SELECT e.id, e.raw, e.created_at FROM events e\nWHERE " + where +
		"\nORDER BY " + order + " LIMIT " + limit
}

// keyset adds the keysetOrder "strictly after" condition of a
// cursor on alias e. The created_at <= bound gives the index a range; the
// OR settles ties inside the cursor's second.
func keyset(b *sqlb, c records.Cursor) string {
	u := b.arg(c.CreatedAt)
	id := b.arg(c.ID)
	return `e.created_at <= ` + u + ` AND (e.created_at < ` + u + ` OR (e.created_at = ` + u + ` AND e.id > ` + id + `))`
}

// fields returns the conditions of f's ids, authors and kinds on events e
// and the placeholder of its kinds ("" when it has none).
func fields(b *sqlb, f *filter.Filter) (conds []string, kinds string) {
	if f.IDs != nil {
		conds = append(conds, oneOf(b, "e.id", f.IDs))
	}
	if f.Authors != nil {
		conds = append(conds, oneOf(b, "e.pubkey", f.Authors))
	}
	if f.Kinds != nil {
		kinds = b.arg(f.Kinds)
		conds = append(conds, "e.kind = ANY("+kinds+"::integer[])")
	}
	return conds, kinds
}

// channelIn is the condition of a filter's #h values on the stored
// channel. One channel is a range of one value (the same rows as "=" under
// the column's C collation), so that the planner keeps "ORDER BY
// e.channel_id, ..." (query) as an order only a channel index gives, and
// walks that index to the page whatever its estimates: an equality makes
// channel_id a constant, the ORDER BY term is dropped, and with statistics
// that say the channel holds most rows (taken before another channel's
// events arrived) Postgres walks events_time instead, filtering out every
// newer event of the other channels (TestChannelPageSurvivesStaleStatistics).
func channelIn(b *sqlb, vals []string) string {
	if len(vals) == 1 {
		v := b.arg(vals[0])
		return "e.channel_id BETWEEN " + v + "::text AND " + v + "::text"
	}
	return oneOf(b, "e.channel_id", vals)
}

// byChannelSQL is filter.ByChannel on events e, beside every #h condition:
// a group's pin list (a 39005 whose d is its channel) is not one of the
// channel's events to #h.
var byChannelSQL = "NOT (e.kind = " + strconv.Itoa(kinds.GroupPins) + " AND e.d_tag IS NOT DISTINCT FROM e.channel_id)"

// oneOf is col's condition for a filter's values: an equality for one
// value, so that an index leading with col returns its rows in the order
// of the next columns (Postgres 15 sorts what a "col = ANY" scan returns,
// and a table without statistics then sorts the whole channel to return a
// page of it), else "col = ANY".
func oneOf(b *sqlb, col string, vals []string) string {
	if len(vals) == 1 {
		return col + " = " + b.arg(vals[0]) + "::text"
	}
	return col + " = ANY(" + b.arg(vals) + "::text[])"
}

// tagAndSearch returns the conditions of f's tag filters and NIP-50 search
// on events e (kinds is the placeholder of f's kinds, "" when it has none).
// #h matches through the stored channel, so reactions, edits and deletions
// (no h tag) match their target's channel. The caller has ruled out an
// empty filter (filter.Empty).
func tagAndSearch(b *sqlb, f *filter.Filter, kinds string) []string {
	var conds []string
	for _, name := range f.TagNames() {
		vals := f.Tags[name]
		if name == "h" {
			conds = append(conds, channelIn(b, vals), byChannelSQL)
			continue
		}
		sub := "SELECT t.event_id FROM event_tags t WHERE t.community_id = " + pCommunity +
			" AND t.name = " + b.arg(name) + " AND t.value = ANY(" + b.arg(vals) + "::text[])"
		if kinds != "" {
			sub += " AND t.kind = ANY(" + kinds + "::integer[])"
		}
		conds = append(conds, "e.id IN ("+sub+")")
	}
	if f.Searches() {
		conds = append(conds, "e.search IS NOT NULL",
			"e.search @@ plainto_tsquery('simple', "+b.arg(f.Search)+")")
	}
	return conds
}

// PlainRead is a NIP-01 filter with the bridge's before_id and page.
type PlainRead struct {
	Filter *filter.Filter
	// BeforeID, with Filter.Until, is a keyset cursor: the rows strictly
	// after (until, before_id) in (created_at DESC, id ASC) order.
	BeforeID string
	Limit    int64
	Offset   int64
}

// where returns the conditions of a plain read on events e; false when it
// cannot match anything.
func (p *PlainRead) where(b *sqlb) (string, bool) {
	f := p.Filter
	if f.Empty() {
		return "", false
	}
	conds := []string{"e.community_id = " + pCommunity, "e." + notDeleted}
	more, kinds := fields(b, f)
	conds = append(conds, more...)
	if f.Since != nil {
		conds = append(conds, "e.created_at >= "+b.arg(*f.Since))
	}
	if f.Until != nil {
		if p.BeforeID != "" {
			conds = append(conds, keyset(b, records.Cursor{CreatedAt: *f.Until, ID: p.BeforeID}))
		} else {
			conds = append(conds, "e.created_at <= "+b.arg(*f.Until))
		}
	}
	conds = append(conds, tagAndSearch(b, f, kinds)...)
	conds = append(conds, maySeeSQL(b, access.Named(f), f.Kinds, f.Tags["h"]))
	return and(conds), true
}

// Plain returns the rows of p the reader may see, newest first.
func (s *Snapshot) Plain(ctx context.Context, p *PlainRead) ([]records.Row, error) {
	if p.Limit == 0 {
		return nil, nil
	}
	b := s.sql()
	q, ok := p.query(b)
	if !ok {
		return nil, nil
	}
	return s.rows(ctx, "plain filter", q, b.args)
}

// query is the statement of a plain read; false when it cannot match
// anything.
func (p *PlainRead) query(b *sqlb) (string, bool) {
	w, ok := p.where(b)
	if !ok {
		return "", false
	}
	// One channel: lead the ORDER BY with it (the same order, since every
	// row has that channel) so that the plan walks events_channel_time in
	// order and stops at the limit. Left to estimates, a just-loaded or
	// skewed table gets a walk of events_time filtering out every newer
	// event of other channels (100 ms instead of 0.5 ms at 20,000 rows).
	lead := ""
	if h := p.Filter.Tags["h"]; len(h) == 1 {
		lead = "e.channel_id"
	}
	q := rowsSQL(w, lead, b.arg(p.Limit))
	if p.Offset > 0 {
		q += " OFFSET " + b.arg(p.Offset)
	}
	return q, true
}

// idSQL selects every matching id, ignoring limit and page (COUNT).
func (p *PlainRead) idSQL(b *sqlb) (string, bool) {
	w, ok := p.where(b)
	if !ok {
		return "", false
	}
	return "SELECT e.id FROM events e WHERE " + w, true
}

// ReadPlain returns the rows of each of reads the reader may see (as
// Snapshot.Plain, one slice per read), all in one round trip: several
// reads share a read-only REPEATABLE READ transaction, a single one is a
// statement of its own (one snapshot either way). With seen not nil, the
// reads share a REPEATABLE READ transaction whose first statement reads
// its snapshot into seen: what a catch-up read asks to be beyond
// (EventsListCommittedAfter).
func (s *Store) ReadPlain(ctx context.Context, community, reader string, reads []*PlainRead, seen *Seen) (rows [][]records.Row, err error) {
	b := &pgx.Batch{}
	rows = make([][]records.Row, len(reads))
	type statement struct {
		i    int
		sql  string
		args []any
	}
	var sts []statement
	for i, p := range reads {
		if p.Limit == 0 {
			continue
		}
		sb := newSQL(community, reader)
		if q, ok := p.query(sb); ok {
			sts = append(sts, statement{i, q, sb.args})
		}
	}
	tx := len(sts) > 1 || seen != nil
	if tx {
		b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	}
	if seen != nil {
		b.Queue(snapshotSQL).QueryRow(func(row pgx.Row) error {
			var text string
			if err := row.Scan(&text); err != nil {
				return err
			}
			var err error
			*seen, err = ParseSeen(text)
			return err
		})
	}
	for _, st := range sts {
		traced(ctx, st.sql, st.args)
		b.Queue(st.sql, st.args...).Query(func(res pgx.Rows) error {
			var err error
			rows[st.i], err = collect(res, scanRow)
			return err
		})
	}
	if tx {
		b.Queue("COMMIT")
	}
	if b.Len() > 0 {
		if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
			return nil, errorf("plain read: %w", err)
		}
	}
	return rows, nil
}

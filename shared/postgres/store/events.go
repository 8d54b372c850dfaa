package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip40"
	"github.com/buzzrelay/relay/shared/domain/records"
)

// maxIndexedTagValue bounds the tag values kept in event_tags (a btree entry
// must stay well under Postgres's ~2.7 kB limit). Longer values are stored in
// raw but are not filterable.
const maxIndexedTagValue = 512

// IndexedTag reports whether a tag gets an event_tags row: a single-letter
// name and a value within maxIndexedTagValue, except h, which every read
// matches through the event's stored channel (tagAndSearch), so its row
// would be written on every channel message and never read.
func IndexedTag(tag []string) bool {
	return len(tag) >= 2 && len(tag[0]) == 1 && tag[0] != "h" && len(tag[1]) <= maxIndexedTagValue
}

// addressKinds is the SQL test for a kind whose events have an address
// (kind:pubkey:d): the replaceable kinds below NIP-01's replaceable range,
// that range and the addressable range (the events_replaceable index's
// predicate, migrations/009 and 010).
var addressKinds = func() string {
	var ks []int
	for _, k := range kinds.ReplaceableKinds() {
		if k < kinds.ReplaceableFirst {
			ks = append(ks, k)
		}
	}
	return "(kind IN (" + sqlInts(ks, ", ") + ") OR kind BETWEEN " +
		strconv.Itoa(kinds.ReplaceableFirst) + " AND " + strconv.Itoa(kinds.ReplaceableLast) + " OR kind BETWEEN " +
		strconv.Itoa(kinds.AddressableFirst) + " AND " + strconv.Itoa(kinds.AddressableLast) + ")"
}()

// EventsInsert stores ev and its single-letter tags. inserted is false when
// the id is already stored (nothing is written then).
func (t *Tx) EventsInsert(ctx context.Context, ev *nostr.Event, m records.EventMeta) (inserted bool, err error) {
	names := make([]string, 0, len(ev.Tags))
	values := make([]string, 0, len(ev.Tags))
	for _, tag := range ev.Tags {
		if IndexedTag(tag) {
			names = append(names, tag[0])
			values = append(values, tag[1])
		}
	}
	th := m.Thread
	if th == nil {
		th = &records.Thread{}
	}
	raw := ev.String()
	insertArgs := []any{t.community, ev.ID, ev.PubKey, int64(ev.CreatedAt), ev.Kind,
		nullable(m.ChannelID), nullable(m.DTag), m.TopLevel, raw, m.Search, ev.Content,
		names, values,
		m.Thread != nil, nullable(th.ParentID), nullable(th.RootID), th.Depth, th.Broadcast,
		expiresAt(ev)}
	st := insertStatements[insertShape{search: m.Search, tags: len(names) > 0, thread: m.Thread != nil, reply: th.RootID != ""}]
	args := make([]any, len(st.args))
	for i, a := range st.args {
		args[i] = insertArgs[a]
	}
	chain := th.ParentID != "" && th.ParentID != th.RootID
	stored := Delivered{Raw: raw, Channel: m.ChannelID, Root: th.RootID}
	var n int
	if m.Last && !chain {
		// Known before the commit that carries a Delivery is sent; a repeat
		// (n 0) commits nothing and is delivered to nobody.
		t.remember(ev.ID, stored)
		err = t.tx.queryRowAndCommit(ctx, st.sql, args, &n)
	} else {
		err = t.tx.QueryRow(ctx, st.sql, args...).Scan(&n)
		if err == nil && n == 1 {
			t.remember(ev.ID, stored)
		}
	}
	if err != nil {
		return false, errorf("insert event %s: %w", ev.ID, err)
	}
	if n == 1 && chain {
		if err := t.adjustChain(ctx, th.RootID, th.ParentID, 1, int64(ev.CreatedAt)); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

// insertShape is which parts the insert of an event has: the event row
// always; its search vector, its tag rows, its thread row and the bump of
// its thread's root only when it has them. Each shape is its own
// statement: Postgres sets up the whole plan of a statement on every
// execution, parts that write nothing included, and on the write path
// that set-up is a good share of the database's CPU (docs/benchmarks.md).
type insertShape struct{ search, tags, thread, reply bool }

// insertStatement is one shape's SQL and, for each of its parameters in
// order, the index of its value in insertArgs.
type insertStatement struct {
	sql  string
	args []int
}

// insertStatements holds every shape's statement, built once from the
// parts below (written against insertArgs' numbering, $1 to $19, and
// renumbered per shape so that each names only the parameters it uses).
var insertStatements = func() map[insertShape]insertStatement {
	out := map[insertShape]insertStatement{}
	for bits := range 16 {
		sh := insertShape{search: bits&1 != 0, tags: bits&2 != 0, thread: bits&4 != 0, reply: bits&8 != 0}
		q := "WITH ins AS (" + insertEventPart(sh.search) + ")"
		if sh.tags {
			q += ", tags AS (" + insertTagsPart + ")"
		}
		if sh.thread {
			q += ", thread AS (" + insertThreadPart + ")"
		}
		if sh.reply {
			q += ", root AS (" + bumpRootPart + ")"
		}
		sql, args := renumber(q + "\nSELECT count(*) FROM ins")
		out[sh] = insertStatement{sql: sql, args: args}
	}
	return out
}()

// insertEventPart is the event row, with its search vector ($11, the
// content) when search.
func insertEventPart(search bool) string {
	vector := "NULL"
	if search {
		vector = "to_tsvector('simple', $11::text)"
	}
	return `
  INSERT INTO events (community_id, id, pubkey, created_at, kind, channel_id, d_tag, top_level, raw, search, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6::text, $7::text, $8, $9, ` + vector + `, $19::bigint)
  ON CONFLICT DO NOTHING
  RETURNING id`
}

const (
	insertTagsPart = `
  INSERT INTO event_tags (community_id, event_id, name, value, kind, created_at, channel_id)
  SELECT $1, ins.id, t.name, t.value, $5, $4, $6::text
  FROM ins, unnest($12::text[], $13::text[]) AS t(name, value)`
	insertThreadPart = `
  INSERT INTO thread_metadata (community_id, event_id, channel_id, created_at, parent_id, root_id, depth, broadcast)
  SELECT $1, ins.id, $6::text, $4, $15::text, $16::text, $17, $18 FROM ins`
	// a reply bumps its thread's root in the same statement, which takes
	// the root's row lock first (see records.Thread)
	bumpRootPart = `
  UPDATE thread_metadata SET
    reply_count = reply_count + CASE WHEN event_id = $15::text THEN 1 ELSE 0 END,
    descendant_count = descendant_count + 1,
    last_reply_at = GREATEST(COALESCE(last_reply_at, 0), $4)
  WHERE community_id = $1 AND event_id = $16::text AND EXISTS (SELECT 1 FROM ins)`
)

// renumber numbers the $n placeholders of q from 1 in order of first
// appearance and returns, for each, the index (n-1) of its value.
func renumber(q string) (string, []int) {
	seen := map[int]int{}
	var args []int
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] != '$' || i+1 >= len(q) || q[i+1] < '0' || q[i+1] > '9' {
			b.WriteByte(q[i])
			continue
		}
		j := i + 1
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(q[i+1 : j])
		k, ok := seen[n]
		if !ok {
			args = append(args, n-1)
			k = len(args)
			seen[n] = k
		}
		b.WriteString("$" + strconv.Itoa(k))
		i = j - 1
	}
	return b.String(), args
}

// expiresAt is ev's NIP-40 expiration as stored (events.expires_at): NULL
// when it has none or a malformed one (nip40.Expired: it never expires).
func expiresAt(ev *nostr.Event) any {
	if at, ok, err := nip40.Expiration(ev.Tags); ok && err == nil {
		return at
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// EventsGet looks up a stored event by id.
func (t *Tx) EventsGet(ctx context.Context, id string) (*records.EventRef, error) {
	r := &records.EventRef{ID: id}
	var depth *int32
	var root, parent, ch, d *string
	var deleted *int64
	err := t.tx.QueryRow(ctx, `
SELECT e.pubkey, e.kind, e.created_at, e.channel_id, e.d_tag, e.deleted_at, m.depth, m.root_id, m.parent_id
FROM events e
LEFT JOIN thread_metadata m ON m.community_id = e.community_id AND m.event_id = e.id
WHERE e.community_id = $1 AND e.id = $2`, t.community, id).
		Scan(&r.Pubkey, &r.Kind, &r.CreatedAt, &ch, &d, &deleted, &depth, &root, &parent)
	if err != nil {
		return nil, errorf("event %s: %w", id, err)
	}
	r.ChannelID, r.DTag, r.Deleted = deref(ch), deref(d), deleted != nil
	if depth != nil {
		r.HasThread, r.Depth, r.RootID, r.ParentID = true, int(*depth), deref(root), deref(parent)
	}
	return r, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// EventsListAddress returns the stored, not deleted events of kind by pubkey with
// the given d tag ("" for plain replaceable kinds).
func (t *Tx) EventsListAddress(ctx context.Context, kind int, pubkey, d string) ([]records.EventRef, error) {
	rows, err := t.tx.Query(ctx, `
SELECT id, created_at, channel_id FROM events
WHERE community_id = $1 AND pubkey = $2 AND kind = $3 AND d_tag IS NOT DISTINCT FROM $4 AND `+notDeleted+`
  AND `+addressKinds,
		t.community, pubkey, kind, nullable(d))
	if err != nil {
		return nil, errorf("addressable %d:%s: %w", kind, pubkey, err)
	}
	return collect(rows, func(row pgx.CollectableRow) (records.EventRef, error) {
		r := records.EventRef{Pubkey: pubkey, Kind: kind, DTag: d}
		var ch *string
		err := row.Scan(&r.ID, &r.CreatedAt, &ch)
		r.ChannelID = deref(ch)
		return r, err
	})
}

// EventsCountReactions counts pubkey's live reactions (kind 7) to target, and reports
// whether one of them has content.
func (t *Tx) EventsCountReactions(ctx context.Context, target, pubkey, content string) (n int, same bool, err error) {
	err = t.tx.QueryRow(ctx, `
SELECT count(*), coalesce(bool_or(e.raw::jsonb->>'content' = $4), false)
FROM event_tags g JOIN events e ON e.community_id = g.community_id AND e.id = g.event_id
WHERE g.community_id = $1 AND g.name = 'e' AND g.value = $2 AND g.kind = `+strconv.Itoa(kinds.Reaction)+`
  AND e.pubkey = $3 AND e.`+notDeleted, t.community, target, pubkey, content).Scan(&n, &same)
	if err != nil {
		return 0, false, errorf("reactions to %s: %w", target, err)
	}
	return n, same, nil
}

// EventsLockAddress takes a transaction-scoped lock on the replaceable address
// kind:pubkey:d, so concurrent versions apply one after another.
func (t *Tx) EventsLockAddress(ctx context.Context, kind int, pubkey, d string) error {
	key := t.community + "/" + strconv.Itoa(kind) + ":" + pubkey + ":" + d
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		return errorf("lock address %d:%s: %w", kind, pubkey, err)
	}
	return nil
}

// EventsDelete removes superseded events (replaced versions) for good,
// with their tag rows and thread metadata.
func (t *Tx) EventsDelete(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := t.tx.Exec(ctx, `
WITH tags AS (DELETE FROM event_tags WHERE community_id = $1 AND event_id = ANY($2)),
     thread AS (DELETE FROM thread_metadata WHERE community_id = $1 AND event_id = ANY($2))
DELETE FROM events WHERE community_id = $1 AND id = ANY($2)`, t.community, ids); err != nil {
		return errorf("delete superseded events: %w", err)
	}
	return nil
}

// EventsSetDeleted hides an event from reads (NIP-09 / 9005). It returns false
// when the event was already deleted.
func (t *Tx) EventsSetDeleted(ctx context.Context, id string, at int64) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE events SET deleted_at = $3 WHERE community_id = $1 AND id = $2 AND `+notDeleted,
		t.community, id, at)
	if err != nil {
		return false, errorf("mark %s deleted: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// EventsExists reports whether an event id is already stored (deleted or not).
func (t *Tx) EventsExists(ctx context.Context, id string) (bool, error) {
	var ok bool
	if err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE community_id = $1 AND id = $2)`, t.community, id).Scan(&ok); err != nil {
		return false, errorf("exists %s: %w", id, err)
	}
	return ok, nil
}

// EventsGetAddressChannel is the channel of the newest stored version (deleted or
// not) of the addressable event kind:pubkey:d; "" when none is stored or it
// is outside any channel.
func (t *Tx) EventsGetAddressChannel(ctx context.Context, kind int, pubkey, d string) (string, error) {
	var ch *string
	err := t.tx.QueryRow(ctx, `
SELECT channel_id FROM events
WHERE community_id = $1 AND kind = $2 AND pubkey = $3 AND d_tag IS NOT DISTINCT FROM $4
  AND `+addressKinds+`
ORDER BY created_at DESC, id ASC LIMIT 1`, t.community, kind, pubkey, nullable(d)).Scan(&ch)
	if notFound(err) {
		return "", nil
	}
	if err != nil {
		return "", errorf("channel of address %d:%s:%s: %w", kind, pubkey, d, err)
	}
	return deref(ch), nil
}

// EventsSetAddressDeleted hides every version of the addressable event kind:pubkey:d
// created at or before until; it returns the ids it hid.
func (t *Tx) EventsSetAddressDeleted(ctx context.Context, kind int, pubkey, d string, until, at int64) ([]string, error) {
	rows, err := t.tx.Query(ctx, `
UPDATE events SET deleted_at = $6
WHERE community_id = $1 AND kind = $2 AND pubkey = $3 AND d_tag IS NOT DISTINCT FROM $4 AND created_at <= $5 AND `+notDeleted+`
  AND `+addressKinds+`
RETURNING id`, t.community, kind, pubkey, nullable(d), until, at)
	if err != nil {
		return nil, errorf("delete address %d:%s:%s: %w", kind, pubkey, d, err)
	}
	return collect(rows, pgx.RowTo[string])
}

// EventsGetLatestCreatedAt is the highest created_at of community's stored events
// (0 for none).
func (s *Store) EventsGetLatestCreatedAt(ctx context.Context, community string) (int64, error) {
	var at int64
	err := s.pool.QueryRow(ctx,
		`SELECT coalesce(max(created_at), 0) FROM events WHERE community_id = $1`, community).Scan(&at)
	if err != nil {
		return 0, errorf("latest event of %s: %w", community, err)
	}
	return at, nil
}

// EventsDeleteExpired deletes, in one transaction, up to limit events of
// any community whose NIP-40 expiration is at or before now (unix seconds;
// events.expires_at, migrations/018), with their tag rows and thread
// metadata, and returns how many it deleted. Rows another sweep holds are
// skipped, so two sweeps never wait on each other; blob_refs rows stay, as
// for every deleted event (a referenced blob stays gated, and an event that
// is gone grants nobody).
func (s *Store) EventsDeleteExpired(ctx context.Context, now int64, limit int) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `
WITH gone AS (
  SELECT community_id, id FROM events
  WHERE expires_at <= $1
  ORDER BY expires_at LIMIT $2
  FOR UPDATE SKIP LOCKED
), tags AS (
  DELETE FROM event_tags t USING gone g WHERE t.community_id = g.community_id AND t.event_id = g.id
), thread AS (
  DELETE FROM thread_metadata m USING gone g WHERE m.community_id = g.community_id AND m.event_id = g.id
), del AS (
  DELETE FROM events e USING gone g WHERE e.community_id = g.community_id AND e.id = g.id RETURNING 1
)
SELECT count(*) FROM del`, now, limit).Scan(&n)
	if err != nil {
		return 0, errorf("delete expired events: %w", err)
	}
	return n, nil
}

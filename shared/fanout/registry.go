package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/nip29"
	"github.com/buzzrelay/relay/shared/reject"
	"github.com/buzzrelay/relay/shared/store"
)

// Lifetime is how long API Gateway keeps a WebSocket connection open; a
// connection row expires after it even when $disconnect never came.
const Lifetime = 2 * time.Hour

// ErrUnknownConnection is returned for a connection id with no (live) row.
var ErrUnknownConnection = errors.New("fanout: unknown connection")

// Registry stores connections and subscriptions in Postgres. Safe for
// concurrent use.
type Registry struct {
	st  *store.Store
	now func() time.Time
}

// NewRegistry builds the registry over st.
func NewRegistry(st *store.Store) *Registry { return &Registry{st: st, now: time.Now} }

// Connection is one WebSocket connection.
type Connection struct {
	ID        string
	Community string
	// RelayURLs are the normalized URLs a NIP-42 relay tag may name.
	RelayURLs     []string
	Challenge     string
	ChallengeSent bool
	Pubkey        string // "" until authenticated
	ConnectedAt   int64
	ExpiresAt     int64
}

// Open records c (replacing a row with the same id) and now and then prunes
// expired connections.
func (r *Registry) Open(ctx context.Context, c Connection) error {
	now := r.now().Unix()
	if c.ConnectedAt == 0 {
		c.ConnectedAt = now
	}
	if c.ExpiresAt == 0 {
		c.ExpiresAt = c.ConnectedAt + int64(Lifetime/time.Second)
	}
	_, err := r.st.Pool.Exec(ctx, `
INSERT INTO ws_connections (id, community_id, relay_urls, challenge, connected_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (id) DO UPDATE SET community_id = EXCLUDED.community_id, relay_urls = EXCLUDED.relay_urls,
  challenge = EXCLUDED.challenge, challenge_sent = false, pubkey = NULL,
  connected_at = EXCLUDED.connected_at, expires_at = EXCLUDED.expires_at`,
		c.ID, c.Community, c.RelayURLs, c.Challenge, c.ConnectedAt, c.ExpiresAt)
	if err != nil {
		return fmt.Errorf("fanout: record connection %s: %w", c.ID, err)
	}
	// About one connect in 16 prunes rows whose $disconnect never came.
	if len(c.Challenge) > 0 && c.Challenge[0] == '0' {
		if _, err := r.st.Pool.Exec(ctx, `DELETE FROM ws_connections WHERE expires_at < $1`, now); err != nil {
			return fmt.Errorf("fanout: prune expired connections: %w", err)
		}
	}
	return nil
}

// Get returns the live connection id, or ErrUnknownConnection.
func (r *Registry) Get(ctx context.Context, id string) (*Connection, error) {
	c := &Connection{ID: id}
	var pk *string
	err := r.st.Pool.QueryRow(ctx, `
SELECT community_id, relay_urls, challenge, challenge_sent, pubkey, connected_at, expires_at
FROM ws_connections WHERE id = $1 AND expires_at > $2`, id, r.now().Unix()).
		Scan(&c.Community, &c.RelayURLs, &c.Challenge, &c.ChallengeSent, &pk, &c.ConnectedAt, &c.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrUnknownConnection
	}
	if err != nil {
		return nil, fmt.Errorf("fanout: load connection %s: %w", id, err)
	}
	if pk != nil {
		c.Pubkey = *pk
	}
	return c, nil
}

// MarkChallengeSent records that the AUTH challenge went out; first is
// false when another invocation already sent it.
func (r *Registry) MarkChallengeSent(ctx context.Context, id string) (first bool, err error) {
	tag, err := r.st.Pool.Exec(ctx,
		`UPDATE ws_connections SET challenge_sent = true WHERE id = $1 AND NOT challenge_sent`, id)
	if err != nil {
		return false, fmt.Errorf("fanout: mark challenge sent: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Authenticate records pubkey as the connection's authenticated key.
func (r *Registry) Authenticate(ctx context.Context, id, pubkey string) error {
	tag, err := r.st.Pool.Exec(ctx, `UPDATE ws_connections SET pubkey = $2 WHERE id = $1`, id, pubkey)
	if err != nil {
		return fmt.Errorf("fanout: authenticate connection: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrUnknownConnection
	}
	return nil
}

// Close deletes the connection and its subscriptions.
func (r *Registry) Close(ctx context.Context, id string) error {
	if _, err := r.st.Pool.Exec(ctx, `DELETE FROM ws_connections WHERE id = $1`, id); err != nil {
		return fmt.Errorf("fanout: delete connection %s: %w", id, err)
	}
	return nil
}

// Subscribe stores (or replaces) subscription sub of connection for reader
// with filters, indexed by the channels they pin. It refuses a new id past
// max subscriptions on the connection.
func (r *Registry) Subscribe(ctx context.Context, community, connection, sub, reader string, filters []nostr.Filter, max int) error {
	raw, err := json.Marshal(filters)
	if err != nil {
		return fmt.Errorf("fanout: encode filters: %w", err)
	}
	pins := Pins(filters)
	// One statement, one round trip: count the connection's other
	// subscriptions, upsert this one only when under max, and make its
	// channel index rows exactly pins. Refused, it changes nothing.
	var others int
	var stored bool
	err = r.st.Pool.QueryRow(ctx, `
WITH others AS (
  SELECT count(*) AS n FROM ws_subscriptions WHERE connection_id = $1 AND sub_id <> $2
), s AS (
  INSERT INTO ws_subscriptions (connection_id, sub_id, community_id, pubkey, filters, created_at)
  SELECT $1, $2, $3, $4, $5, $6 FROM others WHERE others.n < $8
  ON CONFLICT (connection_id, sub_id) DO UPDATE SET community_id = EXCLUDED.community_id,
    pubkey = EXCLUDED.pubkey, filters = EXCLUDED.filters, created_at = EXCLUDED.created_at
  RETURNING connection_id, sub_id
), stale AS (
  DELETE FROM ws_subscription_channels k USING s
  WHERE k.connection_id = s.connection_id AND k.sub_id = s.sub_id
    AND NOT (k.community_id = $3 AND k.channel_id = ANY($7::text[]))
), fresh AS (
  INSERT INTO ws_subscription_channels (community_id, channel_id, connection_id, sub_id)
  SELECT $3, p, s.connection_id, s.sub_id FROM s, unnest($7::text[]) AS p
  ON CONFLICT DO NOTHING
)
SELECT others.n, EXISTS (SELECT 1 FROM s) FROM others`,
		connection, sub, community, reader, string(raw), r.now().Unix(), pins, max).Scan(&others, &stored)
	if err != nil {
		return fmt.Errorf("fanout: store subscription: %w", err)
	}
	if !stored {
		return reject.Restrictedf("a connection may hold %d subscriptions; CLOSE one before opening %q", max, sub)
	}
	return nil
}

// Unsubscribe removes subscription sub of connection (no error if absent).
func (r *Registry) Unsubscribe(ctx context.Context, connection, sub string) error {
	_, err := r.end(ctx, connection, sub)
	return err
}

// end removes subscription sub of connection and reports whether it was
// there.
func (r *Registry) end(ctx context.Context, connection, sub string) (bool, error) {
	tag, err := r.st.Pool.Exec(ctx,
		`DELETE FROM ws_subscriptions WHERE connection_id = $1 AND sub_id = $2`, connection, sub)
	if err != nil {
		return false, fmt.Errorf("fanout: end subscription: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// candidate is a live subscription that may match an event.
type candidate struct {
	connection, sub, pubkey string
	raw                     string // its filters' JSON, decoded by decode
	filters                 []liveFilter
	named                   []string
}

// decode parses the filters of every candidate. Dispatch to the fan-out
// function needs only their keys, so only delivery decodes.
func decode(cands []candidate) error {
	for i := range cands {
		c := &cands[i]
		if c.filters != nil {
			continue
		}
		var fs []nostr.Filter
		if err := json.Unmarshal([]byte(c.raw), &fs); err != nil {
			return fmt.Errorf("fanout: decode filters of %s/%s: %w", c.connection, c.sub, err)
		}
		c.filters = make([]liveFilter, 0, len(fs))
		for _, f := range fs {
			lf := newLiveFilter(f)
			c.filters = append(c.filters, lf)
			c.named = append(c.named, lf.named...)
		}
	}
	return nil
}

// pins reports whether one of the subscription's filters names channel.
func (c *candidate) pins(channel string) bool { return slices.Contains(c.named, channel) }

// candidates returns the live subscriptions of community indexed under any
// of channels ("" is the any-channel bucket).
func (r *Registry) candidates(ctx context.Context, community string, channels []string) ([]candidate, error) {
	rows, err := r.st.Pool.Query(ctx, `
SELECT s.connection_id, s.sub_id, s.pubkey, s.filters
FROM ws_subscriptions s
JOIN ws_connections c ON c.id = s.connection_id
WHERE (s.connection_id, s.sub_id) IN (
  SELECT k.connection_id, k.sub_id FROM ws_subscription_channels k
  WHERE k.community_id = $1 AND k.channel_id = ANY($2::text[]))
  AND c.expires_at > $3`, community, channels, r.now().Unix())
	if err != nil {
		return nil, fmt.Errorf("fanout: find subscriptions: %w", err)
	}
	return scanCandidates(rows)
}

// subscriptions returns the live subscriptions of community among keys ([connection,
// sub] pairs); a closed one is absent.
func (r *Registry) subscriptions(ctx context.Context, community string, keys [][2]string) ([]candidate, error) {
	conns := make([]string, len(keys))
	subs := make([]string, len(keys))
	for i, k := range keys {
		conns[i], subs[i] = k[0], k[1]
	}
	rows, err := r.st.Pool.Query(ctx, `
SELECT s.connection_id, s.sub_id, s.pubkey, s.filters
FROM unnest($1::text[], $2::text[]) AS k(connection_id, sub_id)
JOIN ws_subscriptions s ON s.connection_id = k.connection_id AND s.sub_id = k.sub_id
JOIN ws_connections c ON c.id = s.connection_id
WHERE c.expires_at > $3 AND s.community_id = $4`, conns, subs, r.now().Unix(), community)
	if err != nil {
		return nil, fmt.Errorf("fanout: load batch subscriptions: %w", err)
	}
	return scanCandidates(rows)
}

func scanCandidates(rows pgx.Rows) ([]candidate, error) {
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.connection, &c.sub, &c.pubkey, &c.raw); err != nil {
			return nil, fmt.Errorf("fanout: read subscription: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("fanout: find subscriptions: %w", err)
	}
	return out, nil
}

// access is one (channel, reader) pair.
type access = store.ReadPair

// readable answers, for each pair, whether reader may read channel now
// (store.Readable: access.Reaches for all pairs at once; match.go applies
// the rest of the access rule per filter).
func (r *Registry) readable(ctx context.Context, community string, pairs []access) (map[access]bool, error) {
	return r.st.Readable(ctx, community, pairs)
}

// eventMeta is what delivery needs about a stored event.
type eventMeta struct {
	raw, channel, root string
	system             bool
}

// metas is what delivery needs about one batch of committed events.
type metas struct {
	events map[string]eventMeta
	// roots maps the replies among the batch's deletion targets to their
	// thread roots.
	roots map[string]string
	// system are the system channels among the channels the batch's
	// ephemeral events name.
	system map[string]bool
}

// ephemeral builds the meta of an ephemeral event, which is never stored.
func (m *metas) ephemeral(ev *nostr.Event, raw string) eventMeta {
	ch, _ := nip29.ChannelTag(ev.Tags)
	return eventMeta{raw: raw, channel: ch, system: m.system[ch]}
}

// eventMeta loads the stored, not deleted events among ids, the thread
// roots of the replies among targets, and which of channels are system
// channels, in one round trip.
func (r *Registry) eventMeta(ctx context.Context, community string, ids, targets, channels []string) (*metas, error) {
	out := &metas{events: make(map[string]eventMeta, len(ids)), roots: map[string]string{}, system: map[string]bool{}}
	b := &pgx.Batch{}
	b.Queue(`
SELECT e.id, e.raw, COALESCE(e.channel_id, ''), COALESCE(c.channel_type = 'system', false), COALESCE(t.root_id, '')
FROM events e
LEFT JOIN channels c ON c.community_id = e.community_id AND c.id = e.channel_id
LEFT JOIN thread_metadata t ON t.community_id = e.community_id AND t.event_id = e.id
WHERE e.community_id = $1 AND e.id = ANY($2::text[]) AND e.deleted_at IS NULL`, community, ids).Query(func(rows pgx.Rows) error {
		var id string
		var m eventMeta
		_, err := pgx.ForEachRow(rows, []any{&id, &m.raw, &m.channel, &m.system, &m.root}, func() error {
			out.events[id] = m
			return nil
		})
		return err
	})
	if len(targets) > 0 {
		b.Queue(`SELECT event_id, root_id FROM thread_metadata
WHERE community_id = $1 AND event_id = ANY($2::text[]) AND root_id IS NOT NULL`, community, targets).Query(func(rows pgx.Rows) error {
			var id, root string
			_, err := pgx.ForEachRow(rows, []any{&id, &root}, func() error {
				out.roots[id] = root
				return nil
			})
			return err
		})
	}
	if len(channels) > 0 {
		b.Queue(`SELECT id FROM channels WHERE community_id = $1 AND id = ANY($2::text[]) AND channel_type = 'system'`,
			community, channels).Query(func(rows pgx.Rows) error {
			var id string
			_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
				out.system[id] = true
				return nil
			})
			return err
		})
	}
	if err := r.st.Pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("fanout: load events: %w", err)
	}
	return out, nil
}

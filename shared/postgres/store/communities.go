package store

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// Statements of the communities aggregate: the communities row, its
// hostnames (community_hosts), its NIP-86 pubkey rules and banned events.
// shared/service/community decides what may change; these only execute.

const selectCommunity = `SELECT c.id, c.name, c.about, c.picture, c.operators, c.limits,
       COALESCE(c.relay_pubkey, ''), c.relay_key_ciphertext, c.created_at, c.disabled_at, c.membership_enforced,
       ARRAY(SELECT h.host FROM community_hosts h WHERE h.community_id = c.id ORDER BY h.host)
FROM communities c`

func scanCommunity(row pgx.Row) (*records.Community, error) {
	var c records.Community
	err := row.Scan(&c.ID, &c.Name, &c.About, &c.Picture, &c.Operators, &c.Limits,
		&c.RelayPubkey, &c.Ciphertext, &c.CreatedAt, &c.DisabledAt, &c.MembershipEnforced, &c.Hosts)
	if err != nil {
		return nil, interpret(err)
	}
	return &c, nil
}

// CommunitiesGetByHost reads the community host is a hostname of, or community
// fallback while no community has any hostname; ErrNotFound when neither.
func (s *Store) CommunitiesGetByHost(ctx context.Context, host, fallback string) (*records.Community, error) {
	c, err := scanCommunity(s.pool.QueryRow(ctx, selectCommunity+`
WHERE c.id = (SELECT community_id FROM community_hosts WHERE host = $1)
   OR (c.id = $2 AND NOT EXISTS (SELECT 1 FROM community_hosts))`, host, fallback))
	if err != nil && !notFound(err) {
		return nil, errorf("community at host %q: %w", host, err)
	}
	return c, err
}

// CommunitiesGet reads community id, disabled or not; ErrNotFound when unknown.
func (s *Store) CommunitiesGet(ctx context.Context, id string) (*records.Community, error) {
	c, err := scanCommunity(s.pool.QueryRow(ctx, selectCommunity+` WHERE c.id = $1`, id))
	if err != nil && !notFound(err) {
		return nil, errorf("community %q: %w", id, err)
	}
	return c, err
}

// CommunitiesList reads every community, by id.
func (s *Store) CommunitiesList(ctx context.Context) ([]*records.Community, error) {
	rows, err := s.pool.Query(ctx, selectCommunity+` ORDER BY c.id`)
	if err != nil {
		return nil, errorf("list communities: %w", err)
	}
	defer rows.Close()
	var out []*records.Community
	for rows.Next() {
		c, err := scanCommunity(rows)
		if err != nil {
			return nil, errorf("list communities: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf("list communities: %w", err)
	}
	return out, nil
}

// CommunitiesInsert inserts c (its relay key included, none when RelayPubkey
// is "") with its hostnames in one transaction. A taken id or hostname is a *TakenError and stores
// nothing.
func (s *Store) CommunitiesInsert(ctx context.Context, c *records.Community) error {
	ops := c.Operators
	if ops == nil {
		ops = []string{}
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO communities (id, name, about, picture, operators, relay_key_ciphertext, relay_pubkey)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, c.ID, c.Name, c.About, c.Picture, ops, c.Ciphertext, nullable(c.RelayPubkey)); err != nil {
			return errorf("create community %s: %w", c.ID, taken(err, "community id "+c.ID))
		}
		for _, h := range c.Hosts {
			if err := addHost(ctx, tx, c.ID, h); err != nil {
				return err
			}
		}
		return nil
	})
}

// execer is a pool or a transaction.
type execer interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}

func addHost(ctx context.Context, q execer, id, host string) error {
	if _, err := q.Exec(ctx, `INSERT INTO community_hosts (host, community_id) VALUES ($1, $2)`, host, id); err != nil {
		return errorf("community %s: add host: %w", id, taken(err, "hostname "+host))
	}
	return nil
}

// CommunityHostsInsert makes community id serve host too; a host another
// community serves is a *TakenError.
func (s *Store) CommunityHostsInsert(ctx context.Context, id, host string) error {
	return addHost(ctx, s.pool, id, host)
}

// CommunitiesEnsure stores community id unless it exists and, when host is
// not empty, gives it host unless host is already a hostname; it answers
// the community host belongs to afterwards ("" without a host), so the
// caller sees a host another community holds.
func (s *Store) CommunitiesEnsure(ctx context.Context, id, host string) (hostOwner string, err error) {
	if _, err := s.pool.Exec(ctx, `INSERT INTO communities (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, id); err != nil {
		return "", errorf("ensure community %s: %w", id, err)
	}
	if host == "" {
		return "", nil
	}
	err = s.pool.QueryRow(ctx, `INSERT INTO community_hosts (host, community_id) VALUES ($1, $2)
ON CONFLICT (host) DO UPDATE SET host = EXCLUDED.host RETURNING community_id`, host, id).Scan(&hostOwner)
	if err != nil {
		return "", errorf("ensure community %s host %s: %w", id, host, err)
	}
	return hostOwner, nil
}

// updateCommunity runs a statement that must change community id's row
// ($1 is the id); ErrNotFound when there is none.
func (s *Store) updateCommunity(ctx context.Context, id, what, sql string, args ...any) error {
	tag, err := s.pool.Exec(ctx, sql, append([]any{id}, args...)...)
	if err != nil {
		return errorf("community %s: %s: %w", id, what, err)
	}
	if tag.RowsAffected() == 0 {
		return errorf("community %q: %w", id, records.ErrNotFound)
	}
	return nil
}

// CommunitiesDisable sets community id's disabled_at (kept when already set).
func (s *Store) CommunitiesDisable(ctx context.Context, id string) error {
	return s.updateCommunity(ctx, id, "disable", `UPDATE communities SET disabled_at = COALESCE(disabled_at, now()) WHERE id = $1`)
}

// CommunitiesEnable clears community id's disabled_at.
func (s *Store) CommunitiesEnable(ctx context.Context, id string) error {
	return s.updateCommunity(ctx, id, "enable", `UPDATE communities SET disabled_at = NULL WHERE id = $1`)
}

// CommunitiesSetRelayKey replaces community id's relay key.
func (s *Store) CommunitiesSetRelayKey(ctx context.Context, id string, ciphertext []byte, pubkey string) error {
	return s.updateCommunity(ctx, id, "set relay key", `UPDATE communities SET relay_key_ciphertext = $2, relay_pubkey = $3 WHERE id = $1`, ciphertext, pubkey)
}

// CommunitiesPutRelayKey stores a relay key for community id when it has none, or
// always when replace is set; stored is false when another key stood (a
// concurrent run stored its own first).
func (s *Store) CommunitiesPutRelayKey(ctx context.Context, id string, ciphertext []byte, pubkey string, replace bool) (stored bool, err error) {
	tag, err := s.pool.Exec(ctx, `UPDATE communities SET relay_key_ciphertext = $2, relay_pubkey = $3
WHERE id = $1 AND (relay_key_ciphertext IS NULL OR $4)`, id, ciphertext, pubkey, replace)
	if err != nil {
		return false, errorf("store relay key of %s: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// CommunitiesGetRelayKey reads community id's stored relay key (nil and "" when none);
// ErrNotFound when the community is unknown.
func (s *Store) CommunitiesGetRelayKey(ctx context.Context, id string) (ciphertext []byte, pubkey string, err error) {
	var pub *string
	err = s.pool.QueryRow(ctx, `SELECT relay_key_ciphertext, relay_pubkey FROM communities WHERE id = $1`, id).Scan(&ciphertext, &pub)
	if err != nil {
		return nil, "", errorf("relay key of %s: %w", id, err)
	}
	return ciphertext, deref(pub), nil
}

var setInfo = map[string]string{
	records.InfoName:    `UPDATE communities SET name = $2 WHERE id = $1`,
	records.InfoAbout:   `UPDATE communities SET about = $2 WHERE id = $1`,
	records.InfoPicture: `UPDATE communities SET picture = $2 WHERE id = $1`,
}

// CommunitiesSetInfo sets one of InfoName, InfoAbout, InfoPicture.
func (s *Store) CommunitiesSetInfo(ctx context.Context, id, field, value string) error {
	sql, ok := setInfo[field]
	if !ok {
		return errorf("community %s: unknown field %q", id, field)
	}
	return s.updateCommunity(ctx, id, "set "+field, sql, value)
}

// OperatorsInsert adds pubkey to community id's operators (once).
func (s *Store) OperatorsInsert(ctx context.Context, id, pubkey string) error {
	return s.updateCommunity(ctx, id, "add operator", `UPDATE communities SET operators = array_append(array_remove(operators, $2), $2) WHERE id = $1`, pubkey)
}

// OperatorsInsertFirst makes pubkey community id's one operator while it
// has none (the owner named at deploy); false when it has operators
// already (nothing changes) or there is no such community.
func (s *Store) OperatorsInsertFirst(ctx context.Context, id, pubkey string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE communities SET operators = ARRAY[$2] WHERE id = $1 AND cardinality(operators) = 0`, id, pubkey)
	if err != nil {
		return false, errorf("community %s: seed operator: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// OperatorsDelete removes pubkey from community id's operators
// unless it is the last one (a community keeps someone who can manage
// it): removed false when it was none of them, last true (nothing
// changed) when it is the only one. ErrNotFound: no such community.
func (s *Store) OperatorsDelete(ctx context.Context, id, pubkey string) (removed, last bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var ops []string
		if err := tx.QueryRow(ctx, `SELECT operators FROM communities WHERE id = $1 FOR UPDATE`, id).Scan(&ops); err != nil {
			return errorf("community %s: remove operator: %w", id, err)
		}
		if !slices.Contains(ops, pubkey) {
			return nil
		}
		if len(ops) == 1 {
			last = true
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE communities SET operators = array_remove(operators, $2) WHERE id = $1`, id, pubkey); err != nil {
			return errorf("community %s: remove operator: %w", id, err)
		}
		removed = true
		return nil
	})
	return removed, last, err
}

package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/records"
)

// NIP-43 relay membership (migrations/013): communities.membership_enforced
// and relay_members (admins and members; owners are the community's
// operators and never rows). shared/domain/nip43 decides; these execute.
// Statements that name the owner role take nip43.Owner as a parameter, so
// the role names live in nip43 alone.

// relayRole is pubkey's role in community $1: $3 (the owner role) for an
// operator, else its relay_members role, else ”; with the community's
// flag. $2 pubkey.
const relayRole = `SELECT c.membership_enforced,
  CASE WHEN $2 = ANY (c.operators) THEN $3
       ELSE coalesce((SELECT m.role FROM relay_members m WHERE m.community_id = c.id AND m.pubkey = $2), '') END
FROM communities c WHERE c.id = $1`

// admitsSQL is nip43.Admits in SQL for community $3 and key $4 (the
// parameters of subscribeSQL, its one user): true unless the community
// enforces membership and the key is neither one of its operators nor a
// relay_members row. The row is locked FOR KEY SHARE (a role change
// passes; a removal's DELETE waits for this transaction), so a removal
// either committed before this statement (no row: false) or ends what this
// transaction stores once it committed (RelayMembersDelete).
const admitsSQL = `EXISTS (SELECT 1 FROM communities c WHERE c.id = $3 AND (NOT c.membership_enforced OR $4 = ANY (c.operators)
  OR EXISTS (SELECT 1 FROM relay_members m WHERE m.community_id = $3 AND m.pubkey = $4 FOR KEY SHARE)))`

// RelayMembersGetRoleEnforced reads pubkey's role in the transaction's community (nip43's
// roles, "" none) and whether the community enforces membership.
func (t *Tx) RelayMembersGetRoleEnforced(ctx context.Context, pubkey string) (role string, enforced bool, err error) {
	err = t.tx.QueryRow(ctx, relayRole, t.community, pubkey, nip43.Owner).Scan(&enforced, &role)
	if notFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, errorf("relay role of %s: %w", pubkey, err)
	}
	return role, enforced, nil
}

// RelayMembersGetRole reads pubkey's relay_members role in community ("" when
// it has none); operators are not asked here (the caller knows them).
func (s *Store) RelayMembersGetRole(ctx context.Context, community, pubkey string) (string, error) {
	var role string
	err := s.pool.QueryRow(ctx, `SELECT role FROM relay_members WHERE community_id = $1 AND pubkey = $2`, community, pubkey).Scan(&role)
	if notFound(err) {
		return "", nil
	}
	if err != nil {
		return "", errorf("relay member %s: %w", pubkey, err)
	}
	return role, nil
}

// RelayMembersListRoles reads the relay_members roles of pubkeys in community
// (a key with no row is absent), in one statement; operators are not asked
// here (the caller knows them).
func (s *Store) RelayMembersListRoles(ctx context.Context, community string, pubkeys []string) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT pubkey, role FROM relay_members WHERE community_id = $1 AND pubkey = ANY ($2)`, community, pubkeys)
	if err != nil {
		return nil, errorf("relay members: %w", err)
	}
	out := map[string]string{}
	var pk, role string
	if _, err := pgx.ForEachRow(rows, []any{&pk, &role}, func() error { out[pk] = role; return nil }); err != nil {
		return nil, errorf("relay members: %w", err)
	}
	return out, nil
}

// RelayMembersInsert adds pubkey with role, added by by at at; false (nothing
// changed) when it is a row already.
func (t *Tx) RelayMembersInsert(ctx context.Context, pubkey, role, by string, at int64) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO relay_members (community_id, pubkey, role, added_by, added_at)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, t.community, pubkey, role, by, at)
	if err != nil {
		return false, errorf("add relay member %s: %w", pubkey, err)
	}
	return tag.RowsAffected() == 1, nil
}

// RelayMembersDelete removes pubkey's row, when its role is only ("": any),
// in one conditional statement; false when no row went. (Live delivery
// checks every reader's access as it delivers: the key's subscriptions
// receive nothing after it.)
func (t *Tx) RelayMembersDelete(ctx context.Context, pubkey, only string) (bool, error) {
	var removed bool
	err := t.tx.QueryRow(ctx, `WITH gone AS (
  DELETE FROM relay_members WHERE community_id = $1 AND pubkey = $2 AND ($3 = '' OR role = $3) RETURNING pubkey
)
SELECT EXISTS (SELECT 1 FROM gone)`, t.community, pubkey, only).Scan(&removed)
	if err != nil {
		return false, errorf("remove relay member %s: %w", pubkey, err)
	}
	return removed, nil
}

// RelayMembersSetRole changes pubkey's row to role; false when it has none.
func (t *Tx) RelayMembersSetRole(ctx context.Context, pubkey, role string) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE relay_members SET role = $3 WHERE community_id = $1 AND pubkey = $2`, t.community, pubkey, role)
	if err != nil {
		return false, errorf("set relay role of %s: %w", pubkey, err)
	}
	return tag.RowsAffected() == 1, nil
}

// RelayMembersList lists the community's owners (its operators, as role owner)
// then its rows, each by key.
func (t *Tx) RelayMembersList(ctx context.Context) ([]nip43.Entry, error) {
	rows, err := t.tx.Query(ctx, `SELECT pubkey, role FROM (
  SELECT DISTINCT unnest(operators) AS pubkey, $2::text AS role, 0 AS rank FROM communities WHERE id = $1
  UNION ALL
  SELECT m.pubkey, m.role, 1 FROM relay_members m, communities c
  WHERE m.community_id = $1 AND c.id = $1 AND NOT (m.pubkey = ANY (c.operators))
) l ORDER BY rank, pubkey`, t.community, nip43.Owner)
	if err != nil {
		return nil, errorf("relay members: %w", err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow) (nip43.Entry, error) {
		var m nip43.Entry
		return m, r.Scan(&m.Pubkey, &m.Role)
	})
	if err != nil {
		return nil, errorf("relay members: %w", err)
	}
	return out, nil
}

// CommunitiesSetPicture is 9033's icon, in the command's transaction (the
// statement NIP-86 changerelayicon runs).
func (t *Tx) CommunitiesSetPicture(ctx context.Context, picture string) error {
	if _, err := t.tx.Exec(ctx, setInfo[records.InfoPicture], t.community, picture); err != nil {
		return errorf("set picture: %w", err)
	}
	return nil
}

// CommunitiesSetThreadReplies is 9033's thread_replies_in_channel, in the command's
// transaction (the statement NIP-86 setthreadrepliesinchannel runs).
func (t *Tx) CommunitiesSetThreadReplies(ctx context.Context, on bool) error {
	if _, err := t.tx.Exec(ctx, setThreadReplies, t.community, on); err != nil {
		return errorf("set thread_replies_in_channel: %w", err)
	}
	return nil
}

// CommunitiesSetMembershipEnforced turns community id's membership
// enforcement on or off (live delivery checks every reader's access as it
// delivers, so a non-member's subscription receives nothing after it).
func (s *Store) CommunitiesSetMembershipEnforced(ctx context.Context, id string, on bool) error {
	return s.updateCommunity(ctx, id, "set membership_enforced",
		`UPDATE communities SET membership_enforced = $2 WHERE id = $1`, on)
}

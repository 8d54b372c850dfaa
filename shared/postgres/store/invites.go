package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/records"
)

// Invites (migrations/020): invites (a code's hash, its creator, expiry,
// uses), invite_claims (each admission through one, with the join policy
// version accepted) and join_policies. shared/domain/invite decides;
// shared/service/invites runs the use case.

// Both statements hold nip43.Steward in SQL for the creator: one of
// community $1's operators (an owner) or a relay_members row of role admin
// (a parameter, nip43.Admin).
const (
	insertInviteSQL = `INSERT INTO invites (community_id, code_hash, created_by, created_at, expires_at, max_uses)
SELECT $1, $2, $3, $4, $5, $6 FROM communities c
WHERE c.id = $1 AND ($3 = ANY (c.operators)
  OR EXISTS (SELECT 1 FROM relay_members m WHERE m.community_id = $1 AND m.pubkey = $3 AND m.role = $7))`

	// takeUseSQL takes one use of invite $2 of community $1 for key $3
	// at $4 (policy version $5, NULL none), when it is not revoked, not
	// expired, has a use left and its creator is still an owner or admin
	// ($6 nip43.Admin): one conditional UPDATE, whose row lock makes
	// concurrent claims of the last use take turns (READ COMMITTED
	// re-checks the condition on the row as the winner left it), and
	// records the claim.
	takeUseSQL = `WITH used AS (
  UPDATE invites i SET uses = i.uses + 1
  FROM communities c
  WHERE i.community_id = $1 AND i.code_hash = $2 AND c.id = $1
    AND i.revoked_at IS NULL AND i.expires_at > $4
    AND (i.max_uses = 0 OR i.uses < i.max_uses)
    AND (i.created_by = ANY (c.operators)
      OR EXISTS (SELECT 1 FROM relay_members m WHERE m.community_id = $1 AND m.pubkey = i.created_by AND m.role = $6))
  RETURNING i.code_hash, i.created_by
), claimed AS (
  INSERT INTO invite_claims (community_id, code_hash, pubkey, claimed_at, policy_version)
  SELECT $1, code_hash, $3, $4, $5 FROM used
  ON CONFLICT DO NOTHING
)
SELECT created_by FROM used`
)

// InvitesInsert stores a new invite of community whose code hashes to
// hash, created by by at createdAt, expiring at expiresAt, of maxUses
// uses (0 unlimited), when by is one of the community's owners or admins
// (the check and the insert in one statement); false (nothing stored)
// when it is not.
func (s *Store) InvitesInsert(ctx context.Context, community, hash, by string, createdAt, expiresAt int64, maxUses int) (bool, error) {
	tag, err := s.pool.Exec(ctx, insertInviteSQL, community, hash, by, createdAt, expiresAt, maxUses, nip43.Admin)
	if err != nil {
		return false, errorf("insert invite: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// InvitesTakeUse takes one use of the transaction's community's invite
// whose code hashes to hash for key at now, recording the claim with the
// policy version accepted ("" none); by is the invite's creator, "" when
// no use could be taken (unknown, revoked, expired, used up, or its
// creator no longer an owner or admin: the caller answers all alike).
func (t *Tx) InvitesTakeUse(ctx context.Context, hash, key string, now int64, policyVersion string) (by string, err error) {
	var version *string
	if policyVersion != "" {
		version = &policyVersion
	}
	err = t.tx.QueryRow(ctx, takeUseSQL, t.community, hash, key, now, version, nip43.Admin).Scan(&by)
	if notFound(err) {
		return "", nil
	}
	if err != nil {
		return "", errorf("take invite use: %w", err)
	}
	return by, nil
}

// InvitesGetStateInTx reads the transaction's community's invite whose
// code hashes to hash as a claim that took no use reads it, to say why
// (found false: no such invite in the community).
func (t *Tx) InvitesGetStateInTx(ctx context.Context, hash string) (st records.InviteState, found bool, err error) {
	err = t.tx.QueryRow(ctx, `SELECT i.revoked_at IS NOT NULL, i.expires_at, i.max_uses, i.uses,
  i.created_by = ANY (c.operators)
    OR EXISTS (SELECT 1 FROM relay_members m WHERE m.community_id = $1 AND m.pubkey = i.created_by AND m.role = $3)
FROM invites i JOIN communities c ON c.id = i.community_id
WHERE i.community_id = $1 AND i.code_hash = $2`, t.community, hash, nip43.Admin).
		Scan(&st.Revoked, &st.ExpiresAt, &st.MaxUses, &st.Uses, &st.CreatorAllowed)
	if notFound(err) {
		return st, false, nil
	}
	if err != nil {
		return st, false, errorf("invite state: %w", err)
	}
	return st, true, nil
}

// InvitesExists reports whether community has ever minted the invite
// whose code hashes to hash (revoked, expired and used up alike): a claim
// of a code that never existed costs its caller only, never the
// community's claim budget (shared/service/guard).
func (s *Store) InvitesExists(ctx context.Context, community, hash string) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM invites WHERE community_id = $1 AND code_hash = $2)`,
		community, hash).Scan(&ok); err != nil {
		return false, errorf("invite exists: %w", err)
	}
	return ok, nil
}

// InvitesRevoke revokes community's invite whose code hashes to hash at
// at; false when there is none not revoked yet.
func (s *Store) InvitesRevoke(ctx context.Context, community, hash string, at int64) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE invites SET revoked_at = $3 WHERE community_id = $1 AND code_hash = $2 AND revoked_at IS NULL`,
		community, hash, at)
	if err != nil {
		return false, errorf("revoke invite: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

const selectJoinPolicy = `SELECT terms_markdown, privacy_markdown, age_required, version, secret FROM join_policies WHERE community_id = $1`

func scanJoinPolicy(row pgx.Row) (*invite.Policy, error) {
	var p invite.Policy
	err := row.Scan(&p.Terms, &p.Privacy, &p.AgeRequired, &p.Version, &p.Secret)
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errorf("join policy: %w", err)
	}
	return &p, nil
}

// JoinPoliciesGet reads community's join policy (nil: none configured).
func (s *Store) JoinPoliciesGet(ctx context.Context, community string) (*invite.Policy, error) {
	return scanJoinPolicy(s.pool.QueryRow(ctx, selectJoinPolicy, community))
}

// JoinPoliciesGetInTx reads the transaction's community's join policy (nil: none),
// for a claim to check its receipt against the policy it commits under.
func (t *Tx) JoinPoliciesGetInTx(ctx context.Context) (*invite.Policy, error) {
	return scanJoinPolicy(t.tx.QueryRow(ctx, selectJoinPolicy, t.community))
}

// JoinPoliciesPut sets community's join policy, replacing any.
func (s *Store) JoinPoliciesPut(ctx context.Context, community string, p invite.Policy) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO join_policies (community_id, terms_markdown, privacy_markdown, age_required, version, secret)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (community_id) DO UPDATE SET terms_markdown = EXCLUDED.terms_markdown, privacy_markdown = EXCLUDED.privacy_markdown,
  age_required = EXCLUDED.age_required, version = EXCLUDED.version, secret = EXCLUDED.secret`,
		community, p.Terms, p.Privacy, p.AgeRequired, p.Version, p.Secret)
	if err != nil {
		return errorf("set join policy: %w", err)
	}
	return nil
}

// JoinPoliciesDelete removes community's join policy; false when it had
// none.
func (s *Store) JoinPoliciesDelete(ctx context.Context, community string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM join_policies WHERE community_id = $1`, community)
	if err != nil {
		return false, errorf("clear join policy: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// NIP-29's group structure beyond channels.go (issue 28): subgroups (parent
// chains, children) and invite codes (9009).

// ChannelsListParentChain returns the ancestors of group parent, nearest first, up to
// limit of them, as long as each exists and is not deleted: a subgroup's
// parent that does not exist (or was deleted) makes it a root (NIP-29).
func (t *Tx) ChannelsListParentChain(ctx context.Context, parent string, limit int) ([]string, error) {
	rows, err := t.tx.Query(ctx, `
WITH RECURSIVE up(id, parent, n) AS (
  SELECT id, parent, 1 FROM channels WHERE community_id = $1 AND id = $2 AND `+notDeleted+`
  UNION ALL
  SELECT c.id, c.parent, up.n + 1 FROM channels c JOIN up ON c.community_id = $1 AND c.id = up.parent
  WHERE c.`+notDeleted+` AND up.n < $3
)
SELECT id FROM up ORDER BY n`, t.community, parent, limit)
	if err != nil {
		return nil, errorf("parents of %s: %w", parent, err)
	}
	return collect(rows, pgx.RowTo[string])
}

// ChannelsGetLiveParent returns parent when it names a group that exists and is not
// deleted, else "" (the group is then a root, NIP-29).
func (t *Tx) ChannelsGetLiveParent(ctx context.Context, parent string) (string, error) {
	if parent == "" {
		return "", nil
	}
	chain, err := t.ChannelsListParentChain(ctx, parent, 1)
	if err != nil || len(chain) == 0 {
		return "", err
	}
	return parent, nil
}

// GroupInvitesPut stores an invite code; a code the group already has is kept
// as it is (created is false).
func (t *Tx) GroupInvitesPut(ctx context.Context, in records.GroupInvite) (created bool, err error) {
	tag, err := t.tx.Exec(ctx, `
INSERT INTO group_invites (community_id, channel_id, code, event_id, created_by, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, nullif($7, 0)) ON CONFLICT DO NOTHING`,
		t.community, in.Channel, in.Code, in.EventID, in.CreatedBy, in.CreatedAt, in.ExpiresAt)
	if err != nil {
		return false, errorf("put invite: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// GroupInvitesCheck reports whether code is a live invite of channel at now: not
// revoked and not past its expiry.
func (t *Tx) GroupInvitesCheck(ctx context.Context, channel, code string, now int64) (bool, error) {
	var ok bool
	err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM group_invites
WHERE community_id = $1 AND channel_id = $2 AND code = $3 AND revoked_at IS NULL
  AND `+unexpiredAt("", "$4")+`)`, t.community, channel, code, now).Scan(&ok)
	if err != nil {
		return false, errorf("invite of %s: %w", channel, err)
	}
	return ok, nil
}

// GroupInvitesRevoke revokes the codes the 9009 eventID created in channel; n is
// how many it revoked (0: eventID is no 9009 of the group).
func (t *Tx) GroupInvitesRevoke(ctx context.Context, channel, eventID string, at int64) (n int64, err error) {
	tag, err := t.tx.Exec(ctx, `UPDATE group_invites SET revoked_at = $4
WHERE community_id = $1 AND channel_id = $2 AND event_id = $3 AND revoked_at IS NULL`, t.community, channel, eventID, at)
	if err != nil {
		return 0, errorf("revoke invites: %w", err)
	}
	return tag.RowsAffected(), nil
}

// ChannelsListChildren lists the groups whose parent is id and that are not deleted,
// locked: a deleted parent's children become roots (NIP-29) and their
// 39000 is published again.
func (t *Tx) ChannelsListChildren(ctx context.Context, id string) ([]*records.Channel, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+channelCols+` FROM channels
WHERE community_id = $1 AND parent = $2 AND `+notDeleted+` ORDER BY id FOR UPDATE`, t.community, id)
	if err != nil {
		return nil, errorf("children of %s: %w", id, err)
	}
	defer rows.Close()
	var out []*records.Channel
	for rows.Next() {
		c, err := scanChannel(rows)
		if err != nil {
			return nil, errorf("children of %s: %w", id, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf("children of %s: %w", id, err)
	}
	return out, nil
}

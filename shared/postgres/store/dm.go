package store

import (
	"context"
)

// Buzz's DM channels: a participant's hidden mark (41012) and the hidden
// set the relay publishes as their 30622 (NIP-DV).

// DMsSetHidden marks (at > 0) or clears (at == 0) channel as hidden by
// pubkey, an active member; it reports whether a row changed (a DM hidden
// already stays as it is, whenever the repeat comes).
func (t *Tx) DMsSetHidden(ctx context.Context, channel, pubkey string, at int64) (bool, error) {
	var v any
	if at > 0 {
		v = at
	}
	tag, err := t.tx.Exec(ctx, `UPDATE channel_members SET hidden_at = $4
WHERE community_id = $1 AND channel_id = $2 AND pubkey = $3 AND `+activeMember+`
  AND (hidden_at IS NULL) = ($4::bigint IS NOT NULL)`, t.community, channel, pubkey, v)
	if err != nil {
		return false, errorf("set dm hidden: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// DMsListHidden lists the live DM channels pubkey, an active member, has
// hidden, in id order.
func (t *Tx) DMsListHidden(ctx context.Context, pubkey string) ([]string, error) {
	rows, err := t.tx.Query(ctx, `SELECT m.channel_id FROM channel_members m
JOIN channels c ON c.community_id = m.community_id AND c.id = m.channel_id
WHERE m.community_id = $1 AND m.pubkey = $2 AND m.`+activeMember+` AND m.hidden_at IS NOT NULL
  AND c.channel_type = 'dm' AND c.`+notDeleted+`
ORDER BY m.channel_id`, t.community, pubkey)
	if err != nil {
		return nil, errorf("hidden dms: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, errorf("hidden dms: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf("hidden dms: %w", err)
	}
	return out, nil
}

// ChannelsGetCreateKind is the kind of the event that created channel (its
// create_event), 0 when that event is not stored; ErrNotFound when the
// channel is not.
func (t *Tx) ChannelsGetCreateKind(ctx context.Context, channel string) (int, error) {
	var kind int
	err := t.tx.QueryRow(ctx, `SELECT coalesce(e.kind, 0) FROM channels c
LEFT JOIN events e ON e.community_id = c.community_id AND e.id = c.create_event
WHERE c.community_id = $1 AND c.id = $2`, t.community, channel).Scan(&kind)
	if err != nil {
		return 0, errorf("create kind of %s: %w", channel, err)
	}
	return kind, nil
}

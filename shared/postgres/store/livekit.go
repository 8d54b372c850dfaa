package store

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// ChannelMembersGetSeat reads, in one statement, what NIP-29 LiveKit's token
// endpoint decides on for pubkey in channel of community: whether the
// channel exists, its type and whether it is deleted, whether pubkey is an
// active member of it and whether pubkey is banned now (bannedNow).
func (s *Store) ChannelMembersGetSeat(ctx context.Context, community, channel, pubkey string) (records.Seat, error) {
	var st records.Seat
	err := s.pool.QueryRow(ctx, `SELECT
  coalesce((SELECT c.channel_type FROM channels c WHERE c.community_id = $1 AND c.id = $3), ''),
  coalesce((SELECT c.deleted_at IS NOT NULL FROM channels c WHERE c.community_id = $1 AND c.id = $3), false),
  EXISTS (SELECT 1 FROM channel_members WHERE community_id = $1 AND channel_id = $3 AND pubkey = $2 AND `+activeMember+`),
  `+ruleNow("$2", bannedNow), community, pubkey, channel).Scan(&st.ChannelType, &st.Deleted, &st.Member, &st.Banned)
	if err != nil {
		return records.Seat{}, errorf("channel %s: seat of %s: %w", channel, pubkey, err)
	}
	st.Found = st.ChannelType != ""
	return st, nil
}

// LiveKitParticipantsInsert records identity (of pubkey) as live in
// channel's room since at; a second join of the same identity keeps one
// row.
func (t *Tx) LiveKitParticipantsInsert(ctx context.Context, channel, identity, pubkey string, at int64) error {
	if _, err := t.tx.Exec(ctx, `INSERT INTO livekit_participants (community_id, channel_id, identity, pubkey, joined_at)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, t.community, channel, identity, pubkey, at); err != nil {
		return errorf("channel %s: livekit participant %s joined: %w", channel, identity, err)
	}
	return nil
}

// LiveKitParticipantsDelete forgets identity in channel's room.
func (t *Tx) LiveKitParticipantsDelete(ctx context.Context, channel, identity string) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM livekit_participants WHERE community_id = $1 AND channel_id = $2 AND identity = $3`,
		t.community, channel, identity); err != nil {
		return errorf("channel %s: livekit participant %s left: %w", channel, identity, err)
	}
	return nil
}

// LiveKitParticipantsList is the distinct pubkeys live in channel's room,
// by the second they first joined, then by pubkey.
func (t *Tx) LiveKitParticipantsList(ctx context.Context, channel string) ([]string, error) {
	rows, err := t.tx.Query(ctx, `SELECT pubkey FROM livekit_participants WHERE community_id = $1 AND channel_id = $2
GROUP BY pubkey ORDER BY min(joined_at), pubkey`, t.community, channel)
	if err != nil {
		return nil, errorf("channel %s: livekit participants: %w", channel, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var pk string
		if err := rows.Scan(&pk); err != nil {
			return nil, errorf("channel %s: livekit participants: %w", channel, err)
		}
		out = append(out, pk)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf("channel %s: livekit participants: %w", channel, err)
	}
	return out, nil
}

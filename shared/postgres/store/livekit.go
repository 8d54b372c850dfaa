package store

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// ChannelMembersSeat reads, in one statement, what NIP-29 LiveKit's token
// endpoint decides on for pubkey in channel of community: whether the
// channel exists, its type and whether it is deleted, whether pubkey is an
// active member of it and whether pubkey is banned now (bannedNow).
func (s *Store) ChannelMembersSeat(ctx context.Context, community, channel, pubkey string) (records.Seat, error) {
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

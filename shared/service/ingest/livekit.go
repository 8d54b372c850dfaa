package ingest

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// errNoRoom refuses a LiveKit webhook about a room no group of the
// community has.
var errNoRoom = reject.Invalidf("no group of this community has that LiveKit room")

// LiveKitPresence records that identity (of pubkey) joined (or left) the
// LiveKit room of group in community, as LiveKit's verified webhook said,
// and replaces the group's relay-signed 39004 with the pubkeys live there
// now, in one transaction. Committed holds the 39004 to deliver.
func (s *Service) LiveKitPresence(ctx context.Context, community, group, identity, pubkey string, joined bool) (Outcome, error) {
	return s.relayWrite(ctx, community, "", "livekit presence in "+group, func(ctx context.Context, a *apply) error {
		tx := a.tx
		ch, err := tx.ChannelsGet(ctx, group, true)
		if isNotFound(err) || (err == nil && !livekit.Serves(ch.Type, ch.Deleted)) {
			return errNoRoom
		}
		if err != nil {
			return err
		}
		if joined {
			err = tx.LiveKitParticipantsInsert(ctx, group, identity, pubkey, a.now)
		} else {
			err = tx.LiveKitParticipantsDelete(ctx, group, identity)
		}
		if err != nil {
			return err
		}
		return a.publishLiveKitParticipants(ctx, group)
	})
}

// publishLiveKitParticipants replaces group's relay-signed 39004 with the
// pubkeys live in its LiveKit room now (livekit_participants), in a's
// transaction: after the webhook's join or leave (LiveKitPresence) and
// after a request to vanish took the key's rows (vanish).
func (a *apply) publishLiveKitParticipants(ctx context.Context, group string) error {
	return a.replaceRelayEventIn(ctx, group, kinds.LiveKitParticipants, group, func() (nostr.Tags, error) {
		pks, err := a.tx.LiveKitParticipantsList(ctx, group)
		if err != nil {
			return nil, err
		}
		var tags nostr.Tags
		for _, t := range livekit.ParticipantsTags(group, pks) {
			tags = append(tags, nostr.Tag(t))
		}
		return tags, nil
	})
}

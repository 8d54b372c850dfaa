package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// errNoRoom refuses a LiveKit webhook about a room no group of the
// community has.
var errNoRoom = reject.Invalidf("no group of this community has that LiveKit room")

// LiveKitPresence records that identity (of pubkey) joined (or left) the
// LiveKit room of group in community, as LiveKit's verified webhook said,
// and replaces the group's relay-signed 39004 with the pubkeys live there
// now, in one transaction. Committed holds the 39004 to deliver.
func (s *Service) LiveKitPresence(ctx context.Context, community, group, identity, pubkey string, joined bool) (Outcome, error) {
	now := s.now()
	p, err := s.prepare(ctx, community, now.Unix())
	if err != nil {
		return Outcome{}, err
	}
	var k communityKey
	k.sg, k.err = signer.For(ctx, s.signer, community)
	var out Outcome
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		out = Outcome{}
		err = s.store.Tx(ctx, community, func(tx *store.Tx) error {
			a := &apply{s: s, tx: tx, now: now.Unix(), key: k, unlisted: true}
			if s.delivery != nil {
				out.Delivery = tx.DeliveriesGetAtCommit(func() store.DeliveryRequest { return s.delivery(a.committed()) })
			}
			ch, err := tx.ChannelsGet(ctx, group, true)
			if isNotFound(err) || (err == nil && !livekit.Serves(ch.Type, ch.Deleted)) {
				return errNoRoom
			}
			if err != nil {
				return err
			}
			if joined {
				err = tx.LiveKitParticipantsInsert(ctx, group, identity, pubkey, now.Unix())
			} else {
				err = tx.LiveKitParticipantsDelete(ctx, group, identity)
			}
			if err != nil {
				return err
			}
			if err := a.replaceRelayEventIn(ctx, group, kinds.LiveKitParticipants, group, func() (nostr.Tags, error) {
				pks, err := tx.LiveKitParticipantsList(ctx, group)
				if err != nil {
					return nil, err
				}
				var tags nostr.Tags
				for _, t := range livekit.ParticipantsTags(group, pks) {
					tags = append(tags, nostr.Tag(t))
				}
				return tags, nil
			}); err != nil {
				return err
			}
			out.Committed = a.committed()
			return p.cover(ctx, latest(out.Committed))
		})
		if err == nil || !store.IsSerialization(err) {
			break
		}
	}
	if err != nil {
		if _, ok := reject.As(err); ok || errors.Is(err, context.Canceled) {
			return Outcome{}, err
		}
		return Outcome{}, fmt.Errorf("ingest: livekit presence in %s/%s: %w", community, group, err)
	}
	out.Accepted = true
	return out, nil
}

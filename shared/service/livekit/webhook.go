package livekit

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	lk "github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
)

// Presence records a participant's join or leave and publishes the
// group's 39004 (ingest.Service).
type Presence interface {
	LiveKitPresence(ctx context.Context, community, group, identity, pubkey string, joined bool) (ingest.Outcome, error)
}

// Deliverer hands committed events to live delivery (fanout).
type Deliverer interface {
	Deliver(ctx context.Context, community string, events []*nostr.Event, at *store.Delivery)
}

// Refusals of the webhook.
var (
	// ErrWebhookAuth: the Authorization token does not verify with the
	// API secret, is not in force, or its sha256 is not the body's.
	ErrWebhookAuth = reject.New(reject.AuthRequired, "the LiveKit webhook's Authorization does not verify for this body")
	// ErrWebhookTooLarge: a body over lk.MaxWebhookBody is not read.
	ErrWebhookTooLarge = reject.TooLargef("a LiveKit webhook body is at most %d bytes", lk.MaxWebhookBody)
)

// Webhook takes one LiveKit webhook: verified (lk.VerifyWebhook) before
// anything is read; participant_joined and participant_left of a
// community's group room change its participants and publish its
// relay-signed 39004 (Presence), delivered live; other events, and
// participants whose identity names no pubkey, change nothing.
func (s *Service) Webhook(ctx context.Context, authorization string, body []byte) error {
	if !s.On() {
		return ErrOff
	}
	if len(body) > lk.MaxWebhookBody {
		return ErrWebhookTooLarge
	}
	if err := lk.VerifyWebhook(s.Config, authorization, body, s.now()); err != nil {
		return ErrWebhookAuth
	}
	ev, err := lk.ParseWebhook(body)
	if err != nil {
		return reject.Invalidf("the LiveKit webhook body is not its JSON event")
	}
	joined := ev.Event == lk.ParticipantJoined
	if !joined && ev.Event != lk.ParticipantLeft {
		return nil
	}
	community, group, ok := lk.SplitRoom(ev.Room.Name)
	pubkey := lk.PubkeyOf(ev.Participant.Identity)
	if !ok || pubkey == "" {
		return nil // a room or participant this relay did not name
	}
	if _, err := s.Guard.Admit(ctx, guard.Door{Community: community, Action: guard.Message}); err != nil {
		return err
	}
	if s.Presence == nil {
		return fmt.Errorf("livekit: webhook: no write path in this function")
	}
	out, err := s.Presence.LiveKitPresence(ctx, community, group, ev.Participant.Identity, pubkey, joined)
	if err != nil {
		return err
	}
	if s.Fanout != nil && len(out.Committed) > 0 {
		s.Fanout.Deliver(ctx, community, out.Committed, out.Delivery)
	}
	return nil
}

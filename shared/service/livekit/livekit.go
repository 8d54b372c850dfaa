// Package livekit is NIP-29's live audio/video rooms as a use case: the
// discovery answer and the token endpoint that mints a LiveKit participant
// token for a current member of a group, and LiveKit's webhook, whose
// verified joins and leaves publish the group's 39004 (webhook.go; nips
// 29.md). The rules (token,
// room, which groups have a room) are shared/domain/livekit's; who may
// come in is the door's (shared/service/guard) and the group's membership
// (store.ChannelMembersGetSeat).
package livekit

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"time"

	lk "github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/guard"
)

// Seats reads a key's seat in a channel (store.Store).
type Seats interface {
	ChannelMembersGetSeat(ctx context.Context, community, channel, pubkey string) (records.Seat, error)
}

// Service mints LiveKit tokens and takes LiveKit's webhooks. Config's
// zero value is LiveKit off.
type Service struct {
	Config lk.Config
	Guard  *guard.Guard
	Seats  Seats
	// Presence and Fanout are the webhook's write and live delivery (nil
	// where the function takes no webhook).
	Presence Presence
	Fanout   Deliverer
	// Now and Random default to the clock and crypto/rand.
	Now    func() time.Time
	Random io.Reader
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Refusals of the token endpoint.
var (
	// ErrOff: the relay has no LiveKit server configured.
	ErrOff = reject.Restrictedf("LiveKit audio/video rooms are not served by this relay")
	// ErrNotMember refuses a key that is no current member of the group
	// (or a group that does not exist: the same words, no oracle).
	ErrNotMember = reject.Restrictedf("only current members of this group may join its LiveKit room")
	// ErrNoRoom: the group is of a kind that has no LiveKit room (a DM, a
	// workflow, the system channel); only its members learn it.
	ErrNoRoom = reject.Restrictedf("this group has no LiveKit room")
)

// On reports whether LiveKit is served.
func (s *Service) On() bool { return s != nil && s.Config.On() }

// Grant is a minted token and where to use it: the answer of LiveKit's
// token endpoint.
type Grant struct {
	ServerURL string `json:"server_url"`
	Token     string `json:"participant_token"`
}

// Token mints a participant token for caller in group: caller must pass
// the door as a reader of community (authenticated, the NIP-43 gate), be
// an active member of group and not be banned, and group must have a room
// (lk.Serves).
func (s *Service) Token(ctx context.Context, caller guard.Caller, community, group string) (Grant, error) {
	if !s.On() {
		return Grant{}, ErrOff
	}
	if _, err := s.Guard.Admit(ctx, guard.Door{Community: community, Caller: caller, Action: guard.Read}); err != nil {
		return Grant{}, err
	}
	seat, err := s.Seats.ChannelMembersGetSeat(ctx, community, group, caller.Pubkey)
	if err != nil {
		return Grant{}, fmt.Errorf("livekit: token: %w", err)
	}
	switch {
	case seat.Banned:
		return Grant{}, records.ErrBanned
	case !seat.Found || !seat.Member:
		return Grant{}, ErrNotMember
	case !lk.Serves(seat.ChannelType, seat.Deleted):
		return Grant{}, ErrNoRoom
	}
	random := s.Random
	if random == nil {
		random = rand.Reader
	}
	suffix := make([]byte, 8)
	if _, err := io.ReadFull(random, suffix); err != nil {
		return Grant{}, fmt.Errorf("livekit: identity suffix: %w", err)
	}
	tok, err := lk.ParticipantToken(s.Config, lk.Identity(caller.Pubkey, suffix), lk.RoomName(community, group), s.now())
	if err != nil {
		return Grant{}, err
	}
	return Grant{ServerURL: s.Config.URL, Token: tok}, nil
}

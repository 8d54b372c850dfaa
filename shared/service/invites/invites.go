// Package invites is the invitation model's use case, one model behind two
// doors: Buzz's HTTP API (POST /api/invites, POST /api/invites/claim, the
// join policy and its acceptance; shared/transport/bridge) and NIP-43's
// events (a relay-signed 28935 minted for a REQ, a 28934 join request;
// shared/service/relay and the write path). An invite is created by one
// of the community's owners or admins, expires (bounded), has bounded or
// unlimited uses, and may be revoked (NIP-86 revokeinvite); claiming it
// admits the key as 9030 does, in one transaction that also takes the use
// (shared/service/ingest AdmitByInvite), once, however many claims race.
// The rules are shared/domain/invite's; the SQL store/invites.go's.
package invites

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
)

// Deliverer delivers committed events live (shared/service/fanout).
type Deliverer interface {
	Deliver(ctx context.Context, community string, events []*nostr.Event, at *store.Delivery)
}

// Service runs invites. Ingest and Fanout may be nil in a function that
// does not claim (the query function serves the join policy only).
// Safe for concurrent use.
type Service struct {
	Store  *store.Store
	Guard  *guard.Guard
	Ingest *ingest.Service
	Fanout Deliverer
	Signer signer.Signer
	Now    func() time.Time
}

// Caller is who asks, as the transport authenticated them.
type Caller struct {
	Community, Pubkey string
	// Connection is the WebSocket connection ("" over HTTP).
	Connection string
	// Address is the source address the request came from ("" unknown):
	// a claim's budget counts it after the key (guard.Join).
	Address string
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) admit(ctx context.Context, c Caller, action guard.Action) error {
	_, err := s.Guard.Admit(ctx, guard.Door{Community: c.Community, Action: action,
		Caller: guard.Caller{Pubkey: c.Pubkey, Connection: c.Connection}})
	return err
}

// Minted is a new invite, as Buzz's POST /api/invites answers it (the
// transport adds the landing page's url).
type Minted struct {
	Code          string `json:"code"`
	ExpiresAt     int64  `json:"expires_at"`
	MaxUses       *int   `json:"max_uses"`
	UsesRemaining *int   `json:"uses_remaining"`
}

// Mint creates an invite of c's community under terms for c's key, an
// owner or admin (invite.ErrNotSteward otherwise); the door first (the
// key authenticated, the NIP-43 gate).
func (s *Service) Mint(ctx context.Context, c Caller, terms invite.Terms) (Minted, error) {
	if err := s.admit(ctx, c, guard.Invite); err != nil {
		return Minted{}, err
	}
	code, err := invite.NewCode()
	if err != nil {
		return Minted{}, err
	}
	now := s.now().Unix()
	m := Minted{Code: code, ExpiresAt: now + terms.TTL, UsesRemaining: invite.Remaining(terms.MaxUses, 0)}
	if terms.MaxUses > 0 {
		m.MaxUses = &terms.MaxUses
	}
	ok, err := s.Store.InvitesInsert(ctx, c.Community, invite.Hash(code), c.Pubkey, now, m.ExpiresAt, terms.MaxUses)
	if err != nil {
		return Minted{}, fmt.Errorf("invites: mint: %w", err)
	}
	if !ok {
		return Minted{}, invite.ErrNotSteward
	}
	return m, nil
}

// InviteEvent answers Flotilla's REQ {kinds:[28935]}: a single-use invite
// minted for c's key (an owner or admin), as the relay-signed 28935
// carrying its claim, never stored.
func (s *Service) InviteEvent(ctx context.Context, c Caller) ([]json.RawMessage, error) {
	m, err := s.Mint(ctx, c, invite.FlotillaTerms)
	if err != nil {
		return nil, err
	}
	sg, err := signer.For(ctx, s.Signer, c.Community)
	if err != nil {
		return nil, fmt.Errorf("invites: relay key: %w", err)
	}
	ev := &nostr.Event{Kind: kinds.RelayInvite, CreatedAt: nostr.Timestamp(s.now().Unix()), Tags: invite.InviteTags(m.Code)}
	if err := sg.Sign(ctx, ev); err != nil {
		return nil, fmt.Errorf("invites: sign 28935: %w", err)
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("invites: encode 28935: %w", err)
	}
	return []json.RawMessage{raw}, nil
}

// Claim statuses, as Buzz answers them.
const (
	Joined        = "joined"
	AlreadyMember = "already_member"
)

// Claimed is a claim's answer.
type Claimed struct {
	Status string
}

// Claim is Buzz's claim of code by c's key (POST /api/invites/claim),
// past the NIP-43 gate (the key is no member yet), limited per key and per
// community: Joined (the 8000 and 13534 delivered live), AlreadyMember
// (idempotent: nothing taken), or a refusal: invite.Refusal's for a code
// that cannot admit, invite.ErrPolicyRequired without a valid
// acceptance receipt while a join policy is set.
func (s *Service) Claim(ctx context.Context, c Caller, code, receipt string) (Claimed, error) {
	if _, err := s.Guard.Admit(ctx, guard.Door{Community: c.Community, Action: guard.Join, Claim: code,
		Caller: guard.Caller{Pubkey: c.Pubkey, Connection: c.Connection, Address: c.Address}}); err != nil {
		return Claimed{}, err
	}
	if s.Ingest == nil {
		return Claimed{}, errors.New("invites: claim: no write path in this function")
	}
	out, err := s.Ingest.AdmitByInvite(ctx, c.Community, c.Pubkey, code, receipt)
	if errors.Is(err, ingest.ErrAlreadyMember) {
		return Claimed{Status: AlreadyMember}, nil
	}
	if err != nil {
		return Claimed{}, err
	}
	if len(out.Committed) > 0 && s.Fanout != nil {
		s.Fanout.Deliver(ctx, c.Community, out.Committed, out.Delivery)
	}
	return Claimed{Status: Joined}, nil
}

// Claimer is the claim inside the admission's transaction (ingest's
// Claimer), for both doors.
type Claimer struct{}

// Claim takes one use of code for key in tx at now: the join policy's
// receipt checked first when one is set (its version recorded with the
// claim), then the invite's one conditional update; a code that cannot
// admit is refused as Buzz refuses it (invite.Refusal: unknown or revoked,
// expired, used up), read in the same transaction.
func (Claimer) Claim(ctx context.Context, tx *store.Tx, code, receipt, key string, now int64) error {
	if !invite.Usable(code) {
		return invite.ErrInvalid
	}
	p, err := tx.JoinPoliciesGetInTx(ctx)
	if err != nil {
		return err
	}
	var version string
	if p != nil {
		if err := invite.CheckReceipt(*p, code, receipt, now); err != nil {
			return err
		}
		version = p.Version
	}
	hash := invite.Hash(code)
	by, err := tx.InvitesTakeUse(ctx, hash, key, now, version)
	if err != nil {
		return err
	}
	if by != "" {
		return nil
	}
	st, found, err := tx.InvitesGetStateInTx(ctx, hash)
	if err != nil {
		return err
	}
	if why := invite.Refusal(st, found, now); why != nil {
		return why
	}
	return invite.ErrUsedUp // its last use went to a claim that committed meanwhile
}

// Revoke revokes community's invite of code (NIP-86 revokeinvite): false
// when there is no such invite not revoked yet.
func (s *Service) Revoke(ctx context.Context, community, code string) (bool, error) {
	if !invite.Usable(code) {
		return false, reject.Invalidf("code must be 1 to %d bytes", invite.MaxCodeLength)
	}
	return s.Store.InvitesRevoke(ctx, community, invite.Hash(code), s.now().Unix())
}

// ErrNoPolicy is the answer where a join policy is asked for and none is
// set (Buzz: 404 join_policy_not_configured).
var ErrNoPolicy = reject.Invalidf("join_policy_not_configured")

// Policy is community's join policy (nil: none), read without the door:
// it is public, as Buzz serves it, to anyone about to join.
func (s *Service) Policy(ctx context.Context, community string) (*invite.Policy, error) {
	return s.Store.JoinPoliciesGet(ctx, community)
}

// AcceptPolicy records an acceptance of community's join policy (the
// version shown, the age attestation when asked) for code: its receipt,
// presented with the claim. ErrNoPolicy when none is set.
func (s *Service) AcceptPolicy(ctx context.Context, community, code, version string, ageConfirmed bool) (string, error) {
	p, err := s.Policy(ctx, community)
	if err != nil {
		return "", err
	}
	if p == nil {
		return "", ErrNoPolicy
	}
	return invite.Accept(*p, code, version, ageConfirmed, s.now().Unix())
}

// SetPolicy sets community's join policy (NIP-86 setjoinpolicy), with a
// fresh receipt secret: receipts of an earlier policy no longer pass.
func (s *Service) SetPolicy(ctx context.Context, community string, p invite.Policy) error {
	if err := invite.CheckPolicy(p); err != nil {
		return err
	}
	p.Secret = make([]byte, 32)
	if _, err := rand.Read(p.Secret); err != nil {
		return fmt.Errorf("invites: policy secret: %w", err)
	}
	return s.Store.JoinPoliciesPut(ctx, community, p)
}

// ClearPolicy removes community's join policy (NIP-86 clearjoinpolicy).
func (s *Service) ClearPolicy(ctx context.Context, community string) (bool, error) {
	return s.Store.JoinPoliciesDelete(ctx, community)
}

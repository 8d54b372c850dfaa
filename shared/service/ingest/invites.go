package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Admission through an invite (shared/service/invites is the use case,
// shared/domain/invite the rules): in one transaction, the claim takes one
// use of the invite (Claimer), then the key is admitted as 9030 admits it
// (a relay_members row of role member, the relay-signed 8000 and the
// replaced 13534). Both doors come here: NIP-43's 28934 join request
// (joinRelay, a rule of the write path) and Buzz's POST /api/invites/claim
// (AdmitByInvite).

// Claimer takes one use of the invite code presents for key, in tx, at
// now: nil when taken, else a refusal (invite.ErrInvalid for every code
// that cannot admit; invite.ErrPolicyRequired without an accepted join
// policy). receipt is the join policy's acceptance receipt ("" none).
type Claimer interface {
	Claim(ctx context.Context, tx *store.Tx, code, receipt, key string, now int64) error
}

// WithClaimer returns a copy of s whose 28934 join requests claim through
// c; without one, a 28934 is refused (no invites here).
func (s *Service) WithClaimer(c Claimer) *Service {
	cp := *s
	cp.claimer = c
	return &cp
}

// ErrAlreadyMember is the answer to a claim by a key that already has a
// role (an owner, admin or member): nothing is taken. NIP-43 answers a
// join request with it as OK true.
var ErrAlreadyMember = reject.Duplicatef("you are already a member of this relay")

// joinRelay runs a 28934: fresh, with a claim that admits its sender. In
// a community that does not enforce membership, one without a claim is
// accepted and changes nothing (everyone is admitted already: Flotilla's
// Join Space sends it so); an enforcing community refuses it
// invite.ErrNoClaim, which Flotilla reads as "ask for an invite code".
func (a *apply) joinRelay(ctx context.Context) error {
	code, err := invite.ParseJoin(a.ev, a.now)
	if err != nil {
		return err
	}
	a.unlisted = true
	if code == "" {
		role, enforced, err := a.tx.RelayMembersGetRoleEnforced(ctx, a.ev.PubKey)
		if err != nil {
			return err
		}
		if role == "" && !enforced {
			return nil
		}
	}
	return a.admitByInvite(ctx, a.ev.PubKey, code, "")
}

// admitByInvite admits key with code (and the join policy's receipt):
// ErrAlreadyMember for a key with a role, before any use is taken; a
// claim's refusal; or the admission, with its 8000 and 13534.
func (a *apply) admitByInvite(ctx context.Context, key, code, receipt string) error {
	if a.s.claimer == nil {
		return reject.Restrictedf("this relay issues no invites")
	}
	role, _, err := a.tx.RelayMembersGetRoleEnforced(ctx, key)
	if err != nil {
		return err
	}
	if role != "" {
		return ErrAlreadyMember
	}
	if code == "" {
		return invite.ErrNoClaim
	}
	if err := a.s.claimer.Claim(ctx, a.tx, code, receipt, key, a.now); err != nil {
		if _, refused := reject.As(err); !refused {
			return err
		}
		// A claim of the same key that won the race for the invite's
		// last use committed while this one waited on its row.
		if role, _, rerr := a.tx.RelayMembersGetRoleEnforced(ctx, key); rerr == nil && role != "" {
			return ErrAlreadyMember
		} else if rerr != nil {
			return rerr
		}
		return err
	}
	added, err := a.tx.RelayMembersInsert(ctx, key, nip43.Member, "", a.now)
	if err != nil {
		return err
	}
	if !added { // the same key's other claim admitted it meanwhile: the use goes back
		return ErrAlreadyMember
	}
	return a.publishMembership(ctx, kinds.RelayMemberAdded, key)
}

// AdmitByInvite is Buzz's claim (POST /api/invites/claim) of code by key
// in community, with the join policy's receipt: admitted (Committed holds
// the 8000 and 13534 to deliver), ErrAlreadyMember (nothing changed), or
// another refusal (nothing changed). An error that is not a refusal is no
// verdict.
func (s *Service) AdmitByInvite(ctx context.Context, community, key, code, receipt string) (Outcome, error) {
	return s.relayWrite(ctx, community, key, "admit "+key+" by invite", func(ctx context.Context, a *apply) error {
		return a.admitByInvite(ctx, key, code, receipt)
	})
}

// relayWrite runs one write the relay makes for no client event (an
// invite's admission, LiveKit's presence): body in one transaction of
// community, as authed (empty for none), retried on a serialization
// failure, with the mark raised before and covering what it commits, and
// live delivery asked at the commit, as SubmitAt runs an event. Its
// outcome is accepted with the events committed, a refusal (nothing
// changed), or an error naming what (no verdict).
func (s *Service) relayWrite(ctx context.Context, community, authed, what string, body func(ctx context.Context, a *apply) error) (Outcome, error) {
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
			a := &apply{s: s, tx: tx, authed: authed, now: now.Unix(), key: k, unlisted: true}
			if s.delivery != nil {
				out.Delivery = tx.DeliveriesGetAtCommit(func() store.DeliveryRequest { return s.delivery(a.committed()) })
			}
			if err := body(ctx, a); err != nil {
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
		return Outcome{}, fmt.Errorf("ingest: %s in community %s: %w", what, community, err)
	}
	out.Accepted = true
	return out, nil
}

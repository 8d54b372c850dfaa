// Package guard is the one door every request passes, whichever transport
// it came through: publish (EVENT, POST /events), every read (REQ, COUNT,
// POST /query, /count), a WebSocket message's own limit (AUTH, CLOSE),
// media (upload, list, delete, read) and NIP-86 management, and live delivery's
// readers. The transports authenticate the caller (NIP-42, NIP-98, BUD-01)
// and resolve the community (a Host, a connection's state); the guard
// decides, once, in this order:
//
//  1. the community is served (community.Registry.Serving: known and
//     enabled, as cached within its TTL), else restricted: as an unknown
//     host; when the database cannot say (it is resuming), a caller
//     without a key, for an action that needs one, goes on to be refused
//     at step 3 (keylessWhileAway), anyone else is answered that the
//     database is resuming;
//  2. the rate limits the action costs (ratelimit; let through, logged,
//     when the counters cannot be reached);
//  3. the caller is authenticated when the action needs a key
//     (auth-required: naming what was asked);
//  4. the NIP-43 membership gate (community.Registry.AdmitMember);
//  5. the key's standing where the action asks for it (records.Standing, one
//     statement): an operator, for NIP-86; not banned now, not timed out
//     now, a member of a channel, for media.
//
// The table of which action passes which check is policies; every refusal
// is a *reject.Error with its NIP-01 prefix. A publish's bans and timeouts
// are decided in the write's own transaction (store.Tx.BansCheck: it costs
// no round trip there and covers the event's author too), through the same
// two predicates Standing reads.
package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
)

// Action is what a request asks of a community.
type Action uint8

const (
	// Publish is an event (EVENT, POST /events).
	Publish Action = iota + 1
	// Read is a read: REQ, POST /query, the read-state snapshot.
	Read
	// Count is NIP-45 COUNT and POST /count.
	Count
	// Message is a WebSocket message that asks for nothing above (AUTH,
	// CLOSE): its connection's limit only.
	Message
	// Upload is a media upload: PUT /upload, HEAD /upload (BUD-06),
	// POST /media/upload, a presigned upload's completion.
	Upload
	// ListMedia is BUD-02's GET /list/<pubkey>.
	ListMedia
	// DeleteMedia is DELETE /<sha256> and NIP-86 deleteblob's standing.
	DeleteMedia
	// Manage is a NIP-86 call.
	Manage
	// ReadMedia is a blob's download or HEAD (GET /<sha256>): with or
	// without a key, as the blob's own read rule allows (shared/service/
	// media), behind the community's door and its NIP-43 gate (a caller
	// without a key is no relay member of a community that enforces it).
	ReadMedia
	// Join is an invite's claim (a 28934 join request, POST
	// /api/invites/claim): by a key that is no member yet, so past the
	// NIP-43 gate; a banned key is refused (at every claim door, here);
	// counted against the claim limits by what a stranger cannot
	// multiply, in order: the key's, then its source address's where the
	// transport knows one, then (a code the community minted only) the
	// community's, so a made-up code costs its caller alone.
	Join
	// Invite is an invite's creation (a 28935 asked for by REQ, POST
	// /api/invites): a member's, through the gate; whether the key is an
	// owner or admin is the invite's own rule (shared/domain/invite).
	Invite
	// GIF is a call of the relay's GIF proxy (POST /gifs/search,
	// /gifs/share): a member's, through the NIP-43 gate, by a key not
	// banned, counted against its GIF limit.
	GIF
	// Vanish is a request to vanish (NIP-62, kind 62): authenticated and
	// counted as a publish, and through the NIP-43 gate like any publish:
	// the 62 is stored (the tombstone), so a key a closed community does
	// not admit may not store one there (its content would be served).
	Vanish
	// ReadState is Buzz's private read-state API (/buzz/v1/me/sidebar and
	// /buzz/v1/me/read-state, NIP-98): a read of the key's own state,
	// counted as a read, through the NIP-43 gate, refused to a banned key
	// (a timeout still reads, as Buzz's relay lets it).
	ReadState
)

// Caller is who asks, as the transport authenticated them.
type Caller struct {
	// Pubkey is the authenticated key: the NIP-98 token's or BUD-01 auth
	// event's signer over HTTP, the NIP-42 AUTH key over WebSocket ("" before
	// AUTH).
	Pubkey string
	// Connection is the WebSocket connection ("" over HTTP): its message
	// limit counts every call.
	Connection string
	// Size is the bytes of the message or body that carried the call.
	Size int
	// Counted, when set, is the call's message already counted against
	// the connection's limit (CountMessage): the door decides on it and
	// counts it no more.
	Counted *ratelimit.Counted
	// Address is the source address of the request ("" unknown): a
	// claim's budget counts it (Join).
	Address string
}

// Door is one request at the door.
type Door struct {
	Community string
	Caller    Caller
	Action    Action
	// NewChannel: the event published is a 9007 (channels per hour).
	NewChannel bool
	// Claim is the invite code a Join presents ("" none).
	Claim string
}

// Admitted is what the door learned about an admitted caller.
type Admitted struct {
	// Operator: the key is one of the community's operators (read for the
	// actions that ask for the standing).
	Operator bool
}

// policy is which checks an action passes (package doc, steps 3-6).
type policy struct {
	// unauth is the refusal of a caller without a key; nil: the action
	// needs none.
	unauth *reject.Error
	// cost is what the action costs against the rate limits.
	cost func(d Door) ratelimit.Request
	// operator: only the community's operators.
	operator bool
	// member: the NIP-43 gate.
	member bool
	// standing: read the key's standing; banned and timedOut refuse keys
	// banned or timed out now, channelMember one that is no member of any
	// channel (nor on the allow list, nor an operator).
	standing, banned, timedOut, channelMember bool
	// claim: after the key's budget and its standing, the claim's
	// address's budget and, for a code the community minted, the
	// community's (claimBudget).
	claim bool
}

// Refusals the door answers (besides community.ErrNotServed,
// nip43.ErrNotMember, records.ErrBanned and records.ErrTimedOut).
var (
	errPublishAuth = reject.New(reject.AuthRequired, "publishing needs NIP-42 AUTH first; answer the AUTH challenge")
	errReadAuth    = reject.New(reject.AuthRequired, "reading needs NIP-42 AUTH first; answer the AUTH challenge")
	errCountAuth   = reject.New(reject.AuthRequired, "COUNT needs NIP-42 AUTH first; answer the AUTH challenge")
	errMediaAuth   = reject.New(reject.AuthRequired, "media needs an Authorization header (a kind 24242 event or a NIP-98 token)")
	errManageAuth  = reject.New(reject.AuthRequired, "NIP-86 needs a NIP-98 Authorization header")
	errJoinAuth    = reject.New(reject.AuthRequired, "joining needs the joining key's NIP-42 AUTH or NIP-98 token first")
	errInviteAuth  = reject.New(reject.AuthRequired, "creating an invite needs NIP-42 AUTH or a NIP-98 token first")
	errStateAuth   = reject.New(reject.AuthRequired, "read state needs a NIP-98 Authorization header")
	errGIFAuth     = reject.New(reject.AuthRequired, "GIF search needs a NIP-98 Authorization header")
	// ErrNotOperator refuses a NIP-86 call by a key that is not one of the
	// community's operators.
	ErrNotOperator = reject.Restrictedf("only this community's operators may manage it")
	// ErrNotChannelMember refuses media to a key that is no member of any
	// of the community's channels.
	ErrNotChannelMember = reject.Restrictedf("only members of this community's channels may upload or list media here")
)

func free(Door) ratelimit.Request { return ratelimit.Request{} }

func publishes(d Door) ratelimit.Request {
	authed := d.Caller.Pubkey != ""
	return ratelimit.Request{Event: authed, EventBytes: d.Caller.Size, NewChannel: d.NewChannel}
}

func reads(d Door) ratelimit.Request { return ratelimit.Request{Read: d.Caller.Pubkey != ""} }

// policies is the one table of the door: which check each action passes.
// Media's bytes are bounded by its own quotas (shared/service/media).
var policies = map[Action]policy{
	Publish:     {unauth: errPublishAuth, member: true, cost: publishes},
	Vanish:      {unauth: errPublishAuth, member: true, cost: publishes},
	Read:        {unauth: errReadAuth, member: true, cost: reads},
	Count:       {unauth: errCountAuth, member: true, cost: reads},
	Message:     {cost: free},
	Upload:      {unauth: errMediaAuth, member: true, cost: free, standing: true, banned: true, timedOut: true, channelMember: true},
	ListMedia:   {unauth: errMediaAuth, member: true, cost: free, standing: true, banned: true, channelMember: true},
	DeleteMedia: {unauth: errMediaAuth, cost: free, standing: true, banned: true},
	Manage:      {unauth: errManageAuth, cost: free, standing: true, operator: true},
	ReadMedia:   {cost: free, member: true},
	Join:        {unauth: errJoinAuth, cost: func(d Door) ratelimit.Request { return ratelimit.Request{Claim: d.Caller.Pubkey != ""} }, standing: true, banned: true, claim: true},
	Invite:      {unauth: errInviteAuth, member: true, cost: free},
	ReadState:   {unauth: errStateAuth, member: true, cost: reads, standing: true, banned: true},
	GIF:         {unauth: errGIFAuth, member: true, cost: func(d Door) ratelimit.Request { return ratelimit.Request{GIF: d.Caller.Pubkey != ""} }, standing: true, banned: true},
}

// Guard decides the door. Its parts may be nil: no Communities, every
// community is served and there is no NIP-43 gate; no Limiter, no limits;
// no Store, no standing (then an action that needs one is refused). A nil
// *Guard still refuses a caller without a key where the action needs one.
// Safe for concurrent use.
type Guard struct {
	Communities *community.Registry
	Limiter     *ratelimit.Limiter
	Store       *store.Store
	Log         *slog.Logger
}

// Admit decides d: nil error when the door lets it through, else a
// *reject.Error (or an internal failure, wrapped).
func (g *Guard) Admit(ctx context.Context, d Door) (Admitted, error) {
	p, ok := policies[d.Action]
	if !ok {
		return Admitted{}, fmt.Errorf("guard: unknown action %d", d.Action)
	}
	authed := d.Caller.Pubkey != ""
	if g == nil {
		if !authed && p.unauth != nil {
			return Admitted{}, p.unauth
		}
		return Admitted{}, nil
	}
	if g.Communities != nil {
		if _, err := g.Communities.Serving(ctx, d.Community); err != nil && !keylessWhileAway(p, authed, err) {
			return Admitted{}, refusal("community", err)
		}
	}
	if err := g.limit(ctx, d, p.cost(d)); err != nil {
		return Admitted{}, err
	}
	if !authed && p.unauth != nil {
		return Admitted{}, p.unauth
	}
	if p.member && g.Communities != nil {
		if err := g.Communities.AdmitMember(ctx, d.Community, d.Caller.Pubkey); err != nil {
			return Admitted{}, refusal("membership", err)
		}
	}
	if !p.standing {
		return Admitted{}, nil
	}
	if g.Store == nil {
		return Admitted{}, errors.New("guard: no store to read the standing from")
	}
	s, err := g.Store.PubkeyRulesGetStanding(ctx, d.Community, d.Caller.Pubkey)
	if err != nil {
		return Admitted{}, fmt.Errorf("guard: %w", err)
	}
	switch {
	case p.operator && !s.Operator:
		return Admitted{}, ErrNotOperator
	case p.banned && s.Banned:
		return Admitted{}, records.ErrBanned
	case p.timedOut && s.TimedOut:
		return Admitted{}, records.ErrTimedOut
	case p.channelMember && !s.Member:
		return Admitted{}, ErrNotChannelMember
	}
	if p.claim {
		if err := g.claimBudget(ctx, d); err != nil {
			return Admitted{}, err
		}
	}
	return Admitted{Operator: s.Operator}, nil
}

// keylessWhileAway reports whether err, the community's state that could
// not be read because the database is away (resuming, starting, stopped),
// is no answer to give: the caller has no key and the action needs one,
// so it is refused auth-required: (NIP-42) whether or not the community
// is served, with no database (its message counted in the session
// store). Asking it to retry a request that will be refused all the same
// would be the wrong answer; once it has authenticated (its AUTH meets
// the same door), the database answers for it.
func keylessWhileAway(p policy, authed bool, err error) bool {
	return !authed && p.unauth != nil && reject.Map(err).Class == reject.Unavailable
}

// claimBudget counts a claim past its key's budget against the budgets
// a stranger cannot multiply: its source address's (where one is
// known), then, only when the code is one the community minted
// (revoked, expired or used up alike), the community's. A made-up code
// costs its caller, never the community: fresh keys cannot use up the
// joins of its real newcomers.
func (g *Guard) claimBudget(ctx context.Context, d Door) error {
	if g.Limiter == nil {
		return nil
	}
	base := Door{Community: d.Community, Caller: Caller{Pubkey: d.Caller.Pubkey}} // the message is counted already
	if d.Caller.Address != "" {
		if err := g.limit(ctx, base, ratelimit.Request{ClaimAddress: d.Caller.Address}); err != nil {
			return err
		}
	}
	if !invite.Usable(d.Claim) || g.Limiter.Limits().CommunityClaimsPerMinute <= 0 {
		return nil
	}
	known, err := g.Store.InvitesExists(ctx, d.Community, invite.Hash(d.Claim))
	if err != nil {
		return fmt.Errorf("guard: claim: %w", err)
	}
	if !known {
		return nil
	}
	return g.limit(ctx, base, ratelimit.Request{ClaimOfKnownCode: true})
}

// Message counts a WebSocket message that the session store answers (an
// AUTH, a CLOSE, a REQ answered without the database) against its
// connection's limit (ratelimit.Limiter.Message), once its community is
// served (community.Registry.Serving, cached within its TTL); nothing else.
func (g *Guard) Message(ctx context.Context, d Door) error {
	if g == nil {
		return nil
	}
	if g.Communities != nil {
		if _, err := g.Communities.Serving(ctx, d.Community); err != nil {
			return refusal("community", err)
		}
	}
	if g.Limiter == nil {
		return nil
	}
	return g.limit(ctx, d, ratelimit.Request{})
}

// CountMessage starts counting d's message against its connection's limit
// in the session store, ahead of the door that decides on it
// (d.Caller.Counted, which waits for the count), so that its round trip
// runs alongside others; nil when the door would not count it there
// (ratelimit.Limiter.CountMessage).
func (g *Guard) CountMessage(ctx context.Context, d Door) *ratelimit.Counted {
	if g == nil {
		return nil
	}
	return g.Limiter.CountMessage(ctx, d.Community, d.Caller.Pubkey, d.Caller.Connection)
}

// Readers is the door of live delivery: the keys among the readers of a
// delivery in community the door refuses now, each with its refusal (the
// community is no longer served: every one; the NIP-43 gate: those it
// refuses, asked for all of them in at most one statement). Delivery ends
// their subscriptions. Nil: every reader is admitted.
func (g *Guard) Readers(ctx context.Context, community string, pubkeys []string) (map[string]*reject.Error, error) {
	if g == nil || g.Communities == nil || len(pubkeys) == 0 {
		return nil, nil
	}
	out := map[string]*reject.Error{}
	if _, err := g.Communities.Serving(ctx, community); err != nil {
		r, ok := reject.As(err)
		if !ok {
			return nil, fmt.Errorf("guard: readers: %w", err)
		}
		for _, pk := range pubkeys {
			out[pk] = r
		}
		return out, nil
	}
	refused, err := g.Communities.AdmitMembers(ctx, community, pubkeys)
	if err != nil {
		return nil, fmt.Errorf("guard: readers: %w", err)
	}
	for pk := range refused {
		out[pk] = nip43.ErrNotMember
	}
	return out, nil
}

// Limits are the rate limits the door applies (NIP-11 advertises them).
func (g *Guard) Limits() ratelimit.Limits {
	if g == nil {
		return ratelimit.Limits{}
	}
	return g.Limiter.Limits()
}

// limit counts one call (what lr says it costs) against the limits in one
// statement, and refuses it rate-limited: (with when to try again) past
// one. A check that cannot run lets the call through, logged: the call
// then meets the same database and answers for itself.
func (g *Guard) limit(ctx context.Context, d Door, lr ratelimit.Request) error {
	lr.Community, lr.Pubkey, lr.Connection, lr.Counted = d.Community, d.Caller.Pubkey, d.Caller.Connection, d.Caller.Counted
	err := g.Limiter.Check(ctx, lr)
	if err == nil {
		return nil
	}
	if _, ok := ratelimit.RetryAfter(err); ok {
		return err
	}
	if g.Log != nil {
		g.Log.WarnContext(ctx, "guard: rate limit check failed", "err", err)
	}
	return nil
}

// refusal is err as it stands when it is a refusal, else wrapped with
// what was being asked.
func refusal(what string, err error) error {
	if _, ok := reject.As(err); ok {
		return err
	}
	return fmt.Errorf("guard: %s: %w", what, err)
}

// Package manage is NIP-86 relay management as a use case: a community's
// operators (the door decides who: guard.Manage) ban and allow keys, ban
// events, change the community's name, description and icon, list and
// change its operators, add, disable and enable communities (the
// deployment's default community only: communityMethods), delete blobs and read media usage, set the row
// mode and NIP-43 membership, resolve the 1984 report queue a bounded page
// at a time ([limit, after]) and set the join policy. Its transport,
// shared/transport/nip86, only decodes the JSON-RPC call and encodes the
// answer; the operator console (/admin) calls these same methods and no
// other.
package manage

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/resolve"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/invites"
)

// Service answers NIP-86 calls. Safe for concurrent use.
type Service struct {
	Store    *store.Store
	Registry *community.Registry
	Sealer   community.Sealer // nil: addcommunity is unavailable
	Log      *slog.Logger
	// Blobs deletes media blobs (shared/service/media); nil: media is off.
	Blobs BlobDeleter
	// Guard is the door every call passes (shared/service/guard: the
	// community served, the caller one of its operators).
	Guard *guard.Guard
	// Invites sets the join policy and revokes invites
	// (shared/service/invites); nil: those methods are unavailable.
	Invites *invites.Service
	// Directory is told of every change NIP-11 or a host's resolution
	// reads (shared/service/directory); nil: none kept.
	Directory community.Directory
}

// BlobDeleter deletes a community's blob as pubkey (an operator: every
// upload of it).
type BlobDeleter interface {
	Delete(ctx context.Context, community, pubkey, hash string) error
}

// Methods lists the supported methods, in supportedmethods order.
var Methods = []string{
	"supportedmethods",
	"banpubkey", "unbanpubkey", "listbannedpubkeys", "listtimedoutpubkeys",
	"timeoutpubkey", "untimeoutpubkey",
	"allowpubkey", "unallowpubkey", "listallowedpubkeys",
	"banevent",
	"changerelayname", "changerelaydescription", "changerelayicon",
	"listoperators", "addoperator", "removeoperator",
	"listcommunities", "addcommunity", "disablecommunity", "enablecommunity",
	"deleteblob", "mediausage",
	"setthreadrepliesinchannel",
	"setrelaymembership", "listrelaymembers",
	"listeventsneedingmoderation", "resolvereport", "reopenreport",
	"setjoinpolicy", "clearjoinpolicy", "revokeinvite",
}

// MediaTopKeys is how many of today's uploaders mediausage names.
const MediaTopKeys = 10

// ErrForbidden is a call by a key that is not an operator (the door's
// refusal).
var ErrForbidden = guard.ErrNotOperator

// Call is one NIP-86 call, as its transport decoded it: the method and
// its positional parameters.
type Call struct {
	Method string
	Params []json.RawMessage
}

// Serve runs req as pubkey's call to community c and returns its result.
// A refusal is a reject error (the door's, an *AtDoor, as ErrForbidden for
// a key that is not an operator; nothing changed); any other error is an
// internal failure. nip86.Answer turns both into the wire's answer.
func (s *Service) Serve(ctx context.Context, c *community.Community, pubkey string, req Call) (any, error) {
	if err := s.admit(ctx, c, pubkey); err != nil {
		return nil, err
	}
	res, err := s.call(ctx, c, pubkey, req)
	if err != nil {
		if errors.Is(err, community.ErrNoCommunity) {
			return nil, reject.Invalidf("%s", err)
		}
		return nil, err
	}
	s.Registry.Forget()
	return res, nil
}

// admit passes pubkey through the door of community c's management
// (guard.Manage: the community served, the key one of its operators): a
// refusal is an *AtDoor.
func (s *Service) admit(ctx context.Context, c *community.Community, pubkey string) error {
	if s.Guard == nil {
		return errors.New("manage: no door guard configured")
	}
	if _, err := s.Guard.Admit(ctx, guard.Door{Community: c.ID, Caller: guard.Caller{Pubkey: pubkey}, Action: guard.Manage}); err != nil {
		if _, ok := reject.As(err); ok {
			return &AtDoor{err}
		}
		return err
	}
	return nil
}

// AtDoor is a refusal of the door (shared/service/guard), before the call:
// its transport answers it with the door's status.
type AtDoor struct{ err error }

func (d *AtDoor) Error() string { return d.err.Error() }
func (d *AtDoor) Unwrap() error { return d.err }

func (s *Service) call(ctx context.Context, c *community.Community, pubkey string, req Call) (any, error) {
	p := params(req.Params)
	switch req.Method {
	case "supportedmethods":
		return Methods, nil
	case "banpubkey", "allowpubkey":
		pk, err := p.str(0, "pubkey")
		if err != nil {
			return nil, err
		}
		rule := community.RuleBan
		if req.Method == "allowpubkey" {
			rule = community.RuleAllow
		}
		var expires *int64 // banpubkey's optional third parameter: until when (unix seconds)
		if rule == community.RuleBan && len(p) > 2 && string(p[2]) != "null" {
			at, err := p.future(2, "expires_at")
			if err != nil {
				return nil, err
			}
			expires = &at
		}
		return true, community.SetPubkeyRule(ctx, s.Store, c.ID, pk, rule, p.opt(1), pubkey, expires)
	case "timeoutpubkey": // Buzz's timeout (9042): [pubkey, expires_at, reason]
		pk, err := p.str(0, "pubkey")
		if err != nil {
			return nil, err
		}
		at, err := p.future(1, "expires_at")
		if err != nil {
			return nil, err
		}
		return true, community.SetPubkeyRule(ctx, s.Store, c.ID, pk, community.RuleTimeout, p.opt(2), pubkey, &at)
	case "untimeoutpubkey": // lift a timeout only (9043)
		pk, err := p.str(0, "pubkey")
		if err != nil {
			return nil, err
		}
		return true, community.LiftPubkeyRule(ctx, s.Store, c.ID, pk, community.RuleTimeout)
	case "unbanpubkey", "unallowpubkey": // lift a ban or timeout; take a key off the allow list
		pk, err := p.str(0, "pubkey")
		if err != nil {
			return nil, err
		}
		rules := []string{community.RuleBan, community.RuleTimeout}
		if req.Method == "unallowpubkey" {
			rules = []string{community.RuleAllow}
		}
		return true, community.LiftPubkeyRule(ctx, s.Store, c.ID, pk, rules...)
	case "listbannedpubkeys":
		return community.PubkeyRules(ctx, s.Store, c.ID, community.RuleBan)
	case "listtimedoutpubkeys": // the timeouts in force, with their expiry
		return community.PubkeyRules(ctx, s.Store, c.ID, community.RuleTimeout)
	case "listoperators":
		return community.Operators(ctx, s.Store, c.ID)
	case "addoperator", "removeoperator":
		pk, err := p.str(0, "pubkey")
		if err != nil {
			return nil, err
		}
		if req.Method == "removeoperator" {
			return true, community.RemoveOperator(ctx, s.Store, c.ID, pk)
		}
		return true, community.AddOperator(ctx, s.Store, c.ID, pk)
	case "resolvereport": // closes an open report as a 9044 does, by the same vocabulary
		id, err := p.str(0, "report id")
		if err != nil {
			return nil, err
		}
		status, err := p.str(1, "status")
		if err != nil {
			return nil, err
		}
		action := p.opt(2)
		if !eventcheck.LowerHex(id, 64) {
			return nil, reject.Invalidf("parameter 1 (report id) must be 64 lowercase hex characters")
		}
		if err := resolve.Check(status, action, action != ""); err != nil {
			return nil, err
		}
		return true, s.Store.Tx(ctx, c.ID, func(tx *store.Tx) error {
			ok, err := tx.ModerationReportsUpdate(ctx, id, pubkey, status, action, time.Now().Unix())
			if err == nil && !ok {
				err = stateRefusal(reject.Invalidf("report %s is not open", id))
			}
			return err
		})
	case "reopenreport": // [report id, request id]: a closed report open again, once per request id
		id, err := p.str(0, "report id")
		if err != nil {
			return nil, err
		}
		request, err := p.str(1, "request id")
		if err != nil {
			return nil, err
		}
		if !eventcheck.LowerHex(id, 64) {
			return nil, reject.Invalidf("parameter 1 (report id) must be 64 lowercase hex characters")
		}
		if request == "" || len(request) > MaxRequestID {
			return nil, reject.Invalidf("parameter 2 (request id) must be 1 to %d characters", MaxRequestID)
		}
		return true, s.Store.Tx(ctx, c.ID, func(tx *store.Tx) error {
			found, reopened, replayed, shown, err := tx.ModerationReportsUpdateReopen(ctx, id, request)
			switch {
			case err != nil:
				return err
			case !found:
				return ErrNoSuchItem
			case !reopened && !replayed:
				return stateRefusal(reject.Invalidf("report is not reopenable (current status: %s)", shown))
			}
			return nil
		})
	case "listrelaymembers": // NIP-43: owners (the operators), admins, members
		var out []map[string]string
		err := s.Store.Tx(ctx, c.ID, func(tx *store.Tx) error {
			ms, err := tx.RelayMembersList(ctx)
			for _, m := range ms {
				out = append(out, map[string]string{"pubkey": m.Pubkey, "role": m.Role})
			}
			return err
		})
		if out == nil {
			out = []map[string]string{}
		}
		return map[string]any{"enforced": c.MembershipEnforced, "members": out}, err
	case "mediausage":
		if s.Blobs == nil {
			return nil, reject.Invalidf("media is not enabled on this relay")
		}
		stored, blobs, keys, err := s.Store.MediaStoredGet(ctx, c.ID, blossom.Day(time.Now()), MediaTopKeys)
		if keys == nil {
			keys = []records.KeyBytes{}
		}
		return map[string]any{"stored_bytes": stored, "blobs": blobs, "today_by_key": keys}, err
	case "listallowedpubkeys":
		return community.PubkeyRules(ctx, s.Store, c.ID, community.RuleAllow)
	case "banevent":
		id, err := p.str(0, "event id")
		if err != nil {
			return nil, err
		}
		return true, community.BanEvent(ctx, s.Store, c.ID, id, p.opt(1))
	case "changerelayname", "changerelaydescription", "changerelayicon":
		v, err := p.str(0, "value")
		if err != nil {
			return nil, err
		}
		field := map[string]string{"changerelayname": community.FieldName, "changerelaydescription": community.FieldAbout, "changerelayicon": community.FieldPicture}[req.Method]
		return true, community.SetInfo(ctx, s.Store, c.ID, field, v, s.Directory)
	case "deleteblob":
		h, err := p.str(0, "sha256")
		if err != nil {
			return nil, err
		}
		if s.Blobs == nil {
			return nil, reject.Invalidf("media is not enabled on this relay")
		}
		if _, err := blossom.ParseHash(h); err != nil {
			return nil, err
		}
		return true, s.Blobs.Delete(ctx, c.ID, pubkey, h)
	case "listeventsneedingmoderation": // the open NIP-56 reports (1984), resolved by 9044
		limit, after, err := reportPage(p)
		if err != nil {
			return nil, err
		}
		reports, err := s.Store.ModerationReportsListOpen(ctx, c.ID, after, limit)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(reports))
		for i, r := range reports {
			id := r.TargetEvent
			if id == "" {
				id = r.ID
			}
			out[i] = map[string]any{"id": id, "reason": r.Type + ": " + r.Content, "report": r.ID,
				"reporter": r.Reporter, "pubkey": r.TargetPubkey, "created_at": r.CreatedAt}
		}
		return out, nil
	case "setthreadrepliesinchannel": // NIP-CW's community row mode
		on, err := p.boolean(0, "thread_replies_in_channel")
		if err != nil {
			return nil, err
		}
		return true, s.Store.CommunitiesSetThreadRepliesInChannel(ctx, c.ID, on)
	case "setrelaymembership": // NIP-43: only members may use the community
		on, err := p.boolean(0, "membership enforced")
		if err != nil {
			return nil, err
		}
		return true, community.SetMembership(ctx, s.Store, c.ID, on, s.Directory)
	case "setjoinpolicy", "clearjoinpolicy", "revokeinvite": // invites (shared/service/invites)
		return s.invites(ctx, c, req.Method, p)
	case "listcommunities", "addcommunity", "disablecommunity", "enablecommunity":
		// The deployment's communities are the default community's
		// operators' to list, add, disable and enable, through its host:
		// a disabled community's own host is refused at the door, so its
		// operators could never enable it themselves, and one community's
		// operators may not touch another's.
		if c.ID != s.Registry.Fallback() {
			return nil, reject.Restrictedf("%s is for the operators of the deployment's default community", req.Method)
		}
		if req.Method == "listcommunities" {
			return listCommunities(ctx, s.Store)
		}
		id, err := p.str(0, "community id")
		if err != nil {
			return nil, err
		}
		if req.Method == "disablecommunity" {
			if id == c.ID {
				return nil, reject.Invalidf("the default community cannot be disabled through itself")
			}
			return true, community.Disable(ctx, s.Store, id, s.Directory)
		}
		if req.Method == "enablecommunity" {
			return true, community.Enable(ctx, s.Store, id, s.Directory)
		}
		host, err := p.str(1, "hostname")
		if err != nil {
			return nil, err
		}
		if s.Sealer == nil {
			return nil, errors.New("manage: addcommunity: no sealer configured for relay keys")
		}
		pub, err := community.Create(ctx, s.Store, s.Sealer, s.Directory, community.Spec{
			ID: id, Hosts: []string{host}, Name: p.opt(2), Operators: []string{pubkey},
		})
		if err != nil {
			return nil, err
		}
		return map[string]string{"id": id, "host": host, "relay_pubkey": pub}, nil
	}
	return nil, reject.Invalidf("unsupported method %q", req.Method)
}

// joinPolicyParam is setjoinpolicy's one parameter, in the fields GET
// /api/join-policy shows.
type joinPolicyParam struct {
	Version     *string `json:"version"`
	Terms       string  `json:"terms_markdown"`
	Privacy     string  `json:"privacy_markdown"`
	AgeRequired bool    `json:"age_attestation_required"`
}

// invites runs the invite methods: setjoinpolicy [{version,
// terms_markdown, privacy_markdown, age_attestation_required}],
// clearjoinpolicy [] and revokeinvite [code].
func (s *Service) invites(ctx context.Context, c *community.Community, method string, p params) (any, error) {
	if s.Invites == nil {
		return nil, reject.Invalidf("invites are not enabled on this relay")
	}
	switch method {
	case "setjoinpolicy":
		var jp joinPolicyParam
		if len(p) != 1 || json.Unmarshal(p[0], &jp) != nil || jp.Version == nil {
			return nil, reject.Invalidf("parameter 1 must be {\"version\", \"terms_markdown\", \"privacy_markdown\", \"age_attestation_required\"}")
		}
		return true, s.Invites.SetPolicy(ctx, c.ID, invite.Policy{Version: *jp.Version, Terms: jp.Terms, Privacy: jp.Privacy, AgeRequired: jp.AgeRequired})
	case "clearjoinpolicy":
		return s.Invites.ClearPolicy(ctx, c.ID)
	}
	code, err := p.str(0, "invite code")
	if err != nil {
		return nil, err
	}
	return s.Invites.Revoke(ctx, c.ID, code)
}

// listCommunities is every community of the deployment as the console
// lists it: id, hostnames, name, enabled, operators.
func listCommunities(ctx context.Context, st *store.Store) ([]map[string]any, error) {
	rows, err := st.CommunitiesList(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(rows))
	for i, c := range rows {
		out[i] = map[string]any{"id": c.ID, "hosts": c.Hosts, "name": c.Name, "enabled": c.DisabledAt == nil,
			"operators": c.Operators, "relay_pubkey": c.RelayPubkey}
	}
	return out, nil
}

// ReportPage and MaxReportPage bound one listeventsneedingmoderation
// answer: its optional first parameter asks for up to MaxReportPage
// reports (ReportPage when absent), its optional second names the report
// (an item's "report") the page starts after, oldest first. A page shorter
// than asked for is the last.
const (
	ReportPage    = 100
	MaxReportPage = 500
)

// reportPage reads listeventsneedingmoderation's [limit, after].
func reportPage(p params) (limit int, after string, err error) {
	limit = ReportPage
	if len(p) > 0 && string(p[0]) != "null" {
		if json.Unmarshal(p[0], &limit) != nil || limit < 1 || limit > MaxReportPage {
			return 0, "", reject.Invalidf("parameter 1 (limit) must be a whole number from 1 to %d", MaxReportPage)
		}
	}
	if len(p) > 1 && string(p[1]) != "null" {
		if json.Unmarshal(p[1], &after) != nil || !eventcheck.LowerHex(after, 64) {
			return 0, "", reject.Invalidf("parameter 2 (after) must be a report's id, 64 lowercase hex characters")
		}
	}
	return limit, after, nil
}

type params []json.RawMessage

// str is the required string parameter i.
func (p params) str(i int, what string) (string, error) {
	if i >= len(p) {
		return "", reject.Invalidf("missing parameter %d (%s)", i+1, what)
	}
	var s string
	if err := json.Unmarshal(p[i], &s); err != nil || s == "" {
		return "", reject.Invalidf("parameter %d (%s) must be a non-empty string", i+1, what)
	}
	return s, nil
}

// boolean is the required boolean parameter i.
func (p params) boolean(i int, what string) (bool, error) {
	var on bool
	if i >= len(p) || json.Unmarshal(p[i], &on) != nil {
		return false, reject.Invalidf("parameter %d (%s) must be true or false", i+1, what)
	}
	return on, nil
}

// future is the required parameter i: a unix time in seconds after now and
// within MaxRestriction of it.
func (p params) future(i int, what string) (int64, error) {
	var at int64
	now := time.Now().Unix()
	if i >= len(p) || json.Unmarshal(p[i], &at) != nil || at <= now || at > now+int64(MaxRestriction/time.Second) {
		return 0, reject.Invalidf("parameter %d (%s) must be a unix time in seconds, in the future and within %d days", i+1, what, MaxRestriction/(24*time.Hour))
	}
	return at, nil
}

// MaxRestriction is the longest timeout or temporary ban: 365 days, as
// Buzz's admin API bounds a timeout.
const MaxRestriction = 365 * 24 * time.Hour

// opt is the optional string parameter i ("" when absent or not a string).
func (p params) opt(i int) string {
	if i >= len(p) {
		return ""
	}
	var s string
	if json.Unmarshal(p[i], &s) != nil {
		return ""
	}
	return s
}

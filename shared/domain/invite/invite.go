// Package invite is the invitation model's rules, pure: how a code is made
// (at least 128 bits from crypto/rand) and kept (its SHA-256 only), the
// bounds of an invite's life and uses (Buzz's: 60 s to 30 days, 72 h by
// default; 1 to 10,000 uses or unlimited), who may create one (an owner or
// admin: nip43.Steward), a claim's refusals as Buzz's relay gives them
// (Refusal: ErrExpired, ErrUsedUp, and one ErrInvalid for an unknown code,
// a revoked one and one whose creator is no longer allowed), the NIP-43 events of Flotilla's flow (a 28935 asked for
// by REQ, a 28934 join request with its claim and NIP-70's ["-"]), and the
// join policy's acceptance receipt (a MAC bound to the code and the policy
// version, under the community's own policy secret).
package invite

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Lifetime and use bounds (Buzz's buzz_core::invite values).
const (
	MinTTL     = 60
	DefaultTTL = 72 * 3600
	MaxTTL     = 30 * 24 * 3600
	MaxUses    = 10000
)

// CodeBytes is how much randomness a code carries: 160 bits, so a guess
// (rate-limited per key and per source address) is hopeless.
const CodeBytes = 20

// MaxCodeLength bounds what a claim may present before it is hashed.
const MaxCodeLength = 128

// A claim's refusals, as Buzz's relay answers POST /api/invites/claim
// (403 with invite_invalid, invite_expired or invite_exhausted: the
// desktop app's invite screens tell expired and used up apart), with
// NIP-43's restricted: prefix before Buzz's code. Buzz keeps one answer
// for every code it does not honour, so ErrInvalid is the answer to a
// code unknown here (in this community), revoked, or whose creator is no
// longer an owner or admin: a guess learns nothing. Expired and used up
// are told only of a code that exists, so only to whoever holds it.
var (
	ErrInvalid = reject.Restrictedf("invite_invalid: that invite code is not valid here")
	ErrExpired = reject.Restrictedf("invite_expired: that invite has expired; ask for a new one")
	ErrUsedUp  = reject.Restrictedf("invite_exhausted: that invite has no uses left; ask for a new one")
)

// Refusal is why invite s (found false: no such code in the community)
// admits no one at now, in Buzz's order: unknown, revoked or its creator
// no longer allowed (ErrInvalid), expired (ErrExpired), used up
// (ErrUsedUp); nil when it still admits.
func Refusal(s records.InviteState, found bool, now int64) error {
	switch {
	case !found || s.Revoked || !s.CreatorAllowed:
		return ErrInvalid
	case s.ExpiresAt <= now:
		return ErrExpired
	case s.MaxUses > 0 && s.Uses >= s.MaxUses:
		return ErrUsedUp
	}
	return nil
}

// ErrNotSteward refuses minting to a key that is no owner or admin.
var ErrNotSteward = reject.Restrictedf("only relay owners and admins can create invites")

// ErrPolicyRequired refuses a claim without a valid acceptance receipt of
// the community's current join policy.
var ErrPolicyRequired = reject.Restrictedf("join_policy_required: accept the join policy first (POST /api/invites/accept-policy)")

var codeEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewCode returns a fresh code: CodeBytes from crypto/rand, lowercase
// base32 (URL- and copy-safe).
func NewCode() (string, error) {
	b := make([]byte, CodeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("invite: random code: %w", err)
	}
	return strings.ToLower(codeEncoding.EncodeToString(b)), nil
}

// Hash is what is stored of a code: its SHA-256, hex. A presented code is
// trimmed first (copy and paste).
func Hash(code string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(code)))
	return hex.EncodeToString(sum[:])
}

// Usable reports whether a presented code is worth a lookup: non-empty and
// at most MaxCodeLength bytes (anything else is ErrInvalid unread).
func Usable(code string) bool {
	c := strings.TrimSpace(code)
	return c != "" && len(c) <= MaxCodeLength
}

// Terms are a new invite's: its lifetime in seconds and its uses (0:
// unlimited).
type Terms struct {
	TTL     int64
	MaxUses int
}

// NewTerms checks a mint request's ttl_secs and max_uses (nil: the default
// lifetime; unlimited uses).
func NewTerms(ttl *int64, maxUses *int) (Terms, error) {
	t := Terms{TTL: DefaultTTL}
	if ttl != nil {
		t.TTL = *ttl
	}
	if t.TTL < MinTTL || t.TTL > MaxTTL {
		return Terms{}, reject.Invalidf("ttl_secs must be between %d and %d", MinTTL, MaxTTL)
	}
	if maxUses != nil {
		if *maxUses < 1 || *maxUses > MaxUses {
			return Terms{}, reject.Invalidf("max_uses must be between 1 and %d", MaxUses)
		}
		t.MaxUses = *maxUses
	}
	return t, nil
}

// FlotillaTerms are the terms of an invite minted for a 28935 request:
// the default lifetime, one use (the link Flotilla shares admits one key).
var FlotillaTerms = Terms{TTL: DefaultTTL, MaxUses: 1}

// Remaining is an invite's uses left (nil: unlimited).
func Remaining(maxUses, uses int) *int {
	if maxUses == 0 {
		return nil
	}
	n := max(maxUses-uses, 0)
	return &n
}

// AsksForInvite reports whether a REQ asks the relay for a 28935 invite:
// every filter names kind 28935 alone (Flotilla's {kinds:[28935], limit:1}).
func AsksForInvite(filters []nostr.Filter) bool {
	if len(filters) == 0 {
		return false
	}
	for _, f := range filters {
		if !slices.Equal(f.Kinds, []int{kinds.RelayInvite}) {
			return false
		}
	}
	return true
}

// InviteTags are the tags of a relay-signed 28935 carrying code.
func InviteTags(code string) nostr.Tags {
	return nostr.Tags{{nip43.ProtectedTag}, {"claim", code}}
}

// ParseJoin checks a 28934 join request against now: fresh (nip43's
// window), and its claim (the first claim tag's value, "" when there is
// none). NIP-70's ["-"] is accepted and not required: Flotilla's
// makeJoinRequest sends the claim alone, and a claim admits only the key
// that signed the request, so a replayed request admits nobody else.
func ParseJoin(ev *nostr.Event, now int64) (string, error) {
	if err := nip43.Fresh(int64(ev.CreatedAt), now); err != nil {
		return "", err
	}
	claim, _ := filter.TagValue(ev.Tags, "claim")
	return claim, nil
}

// ErrNoClaim refuses a join request without a claim (Flotilla reads
// "invite code" in it as "this relay wants one").
var ErrNoClaim = reject.Restrictedf("an invite code is required to join this relay")

// Policy is a community's join policy, as the operator set it (NIP-86
// setjoinpolicy).
type Policy struct {
	Terms, Privacy string // Markdown; "" none
	AgeRequired    bool
	Version        string
	// Secret keys the acceptance receipts (never shown).
	Secret []byte
}

// Policy text bounds.
const (
	MaxPolicyText    = 64 << 10
	MaxPolicyVersion = 64
)

// CheckPolicy checks a policy the operator sets.
func CheckPolicy(p Policy) error {
	switch {
	case strings.TrimSpace(p.Version) == "" || len(p.Version) > MaxPolicyVersion:
		return reject.Invalidf("version must be 1 to %d bytes", MaxPolicyVersion)
	case len(p.Terms) > MaxPolicyText || len(p.Privacy) > MaxPolicyText:
		return reject.Invalidf("terms and privacy are at most %d bytes each", MaxPolicyText)
	}
	return nil
}

// ReceiptTTL is how long an acceptance receipt may be presented.
const ReceiptTTL = 3600

// Accept checks an acceptance of p (the version the client showed, the
// age attestation when p asks for it) and returns its receipt for code,
// valid until now+ReceiptTTL.
func Accept(p Policy, code, version string, ageConfirmed bool, now int64) (string, error) {
	if version != p.Version || (p.AgeRequired && !ageConfirmed) {
		return "", reject.Invalidf("join_policy_not_accepted: accept version %q of the join policy%s", p.Version, map[bool]string{true: " and confirm your age", false: ""}[p.AgeRequired])
	}
	if !Usable(code) {
		return "", reject.Invalidf("code must be 1 to %d bytes", MaxCodeLength)
	}
	until := now + ReceiptTTL
	var u [8]byte
	binary.BigEndian.PutUint64(u[:], uint64(until))
	return base64.RawURLEncoding.EncodeToString(append(u[:], receiptMAC(p, code, until)...)), nil
}

// CheckReceipt checks receipt: issued under p's secret for code and p's
// current version, and not expired at now.
func CheckReceipt(p Policy, code, receipt string, now int64) error {
	raw, err := base64.RawURLEncoding.DecodeString(receipt)
	if err != nil || len(raw) != 8+sha256.Size {
		return ErrPolicyRequired
	}
	until := int64(binary.BigEndian.Uint64(raw[:8]))
	if until < now || !hmac.Equal(raw[8:], receiptMAC(p, code, until)) {
		return ErrPolicyRequired
	}
	return nil
}

func receiptMAC(p Policy, code string, until int64) []byte {
	m := hmac.New(sha256.New, p.Secret)
	fmt.Fprintf(m, "buzz-join-policy\x00%s\x00%s\x00%d", Hash(code), p.Version, until)
	return m.Sum(nil)
}

// Package nip43 is NIP-43 relay membership as Buzz's relay runs it, pure:
// who a community that enforces membership admits (Admits, the one
// predicate every path asks through a Gate), the 9030-9032 commands' shape
// and permission matrix (Parse, Decide), the 28936 leave request's checks
// (CheckLeave), 9033's values, and the tags of the relay-signed 13534 list
// and 8000/8001 deltas. Owners are the community's operators (NIP-86);
// admins and members are rows the commands keep.
package nip43

import (
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip70"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Roles. Owner is never stored: a community's operators are its owners.
const (
	Owner  = "owner"
	Admin  = "admin"
	Member = "member"
)

// Freshness bounds how far a command's or leave request's created_at may
// be from the relay's clock, in seconds (Buzz: ±120 s, against replay).
const Freshness = 120

// ProtectedTag is NIP-70's marker (nip70.Tag), on the leave request and on
// every relay-signed membership event.
const ProtectedTag = nip70.Tag

// ErrNotMember is the refusal of a key outside an enforcing community, on
// every path (Buzz's text).
var ErrNotMember = reject.Restrictedf("not a relay member")

// Admits is the one membership predicate: a community that does not
// enforce membership admits everyone; one that does admits a key with a
// role (owner, admin or member).
func Admits(enforced bool, role string) bool { return !enforced || role != "" }

// Gate is the membership check at each path's one entry (the door,
// shared/service/guard, for every request; the idle fold of
// shared/service/sessions): nil, or ErrNotMember.
type Gate interface {
	AdmitMember(ctx context.Context, community, pubkey string) error
}

// Steward reports whether role may add and remove members (9030, 9031,
// 9033).
func Steward(role string) bool { return role == Owner || role == Admin }

// Removable is the one role a removal (9031) by sender may take, for the
// store's conditional delete ("": any row): an admin removes members only,
// so a target promoted meanwhile is not removed.
func Removable(sender string) string {
	if sender == Admin {
		return Member
	}
	return ""
}

// Command is a parsed 9030, 9031 or 9032.
type Command struct {
	Kind   int
	Target string // the first valid p tag's key, lower case
	Role   string // 9030: member unless given; 9032: as given; 9031: ""
}

// Fresh refuses a created_at more than Freshness seconds from now.
func Fresh(createdAt, now int64) error {
	if d := createdAt - now; d > Freshness || d < -Freshness {
		return reject.Invalidf("created_at is %d s from the relay's clock (at most %d s either way)", d, Freshness)
	}
	return nil
}

// Parse reads a 9030, 9031 or 9032: fresh, the target the first p tag
// holding 64 hex digits (any case), the role tag's value.
func Parse(ev *nostr.Event, now int64) (Command, error) {
	c := Command{Kind: ev.Kind}
	if err := Fresh(int64(ev.CreatedAt), now); err != nil {
		return c, err
	}
	for _, p := range filter.TagValues(ev.Tags, "p") {
		if low := strings.ToLower(p); eventcheck.LowerHex(low, 64) {
			c.Target = low
			break
		}
	}
	if c.Target == "" {
		return c, reject.Invalidf("kind %d needs a p tag naming a 64-hex public key", ev.Kind)
	}
	role, has := filter.TagValue(ev.Tags, "role")
	switch ev.Kind {
	case kinds.RelayAddMember:
		c.Role = Member
		if has {
			c.Role = role
		}
	case kinds.RelayChangeRole:
		if !has {
			return c, reject.Invalidf("kind %d needs a role tag (member or admin)", ev.Kind)
		}
		c.Role = role
	}
	return c, nil
}

// Decide is the permission matrix of c sent by a key of role sender (self:
// the target is the sender), against the target's current role ("" none).
// A 9030 of a key that already has a role is allowed and changes nothing
// (its role stays: 9032 changes it).
func Decide(c Command, sender, target string, self bool) error {
	switch c.Kind {
	case kinds.RelayAddMember:
		if !Steward(sender) {
			return reject.Restrictedf("adding relay members is for owners and admins")
		}
		if err := grantable(c.Role); err != nil {
			return err
		}
		if c.Role == Admin && sender != Owner {
			return reject.Restrictedf("only an owner grants the admin role")
		}
	case kinds.RelayRemoveMember:
		switch {
		case !Steward(sender):
			return reject.Restrictedf("removing relay members is for owners and admins")
		case self:
			return reject.Invalidf("cannot remove yourself (send a 28936 leave request)")
		case target == Owner:
			return reject.Restrictedf("cannot remove the relay owner")
		case target == "":
			return reject.Invalidf("%s is not a relay member", c.Target)
		case Removable(sender) != "" && target != Removable(sender):
			return reject.Restrictedf("admins can only remove members")
		}
	case kinds.RelayChangeRole:
		switch {
		case sender != Owner:
			return reject.Restrictedf("changing relay roles is for owners")
		case self:
			return reject.Invalidf("cannot change your own role")
		}
		if err := grantable(c.Role); err != nil {
			return err
		}
		switch target {
		case Owner:
			return reject.Restrictedf("cannot change the relay owner's role")
		case "":
			return reject.Invalidf("%s is not a relay member", c.Target)
		}
	default:
		return reject.Invalidf("kind %d is not a relay membership command", c.Kind)
	}
	return nil
}

// grantable refuses a role a command may not give: owner (owners are the
// community's operators, NIP-86) or any name but admin and member.
func grantable(role string) error {
	switch role {
	case Member, Admin:
		return nil
	case Owner:
		return reject.Invalidf("owners are the community's operators (NIP-86), not a role a command gives")
	}
	return reject.Invalidf("role %q must be member or admin", role)
}

// CheckLeave checks a 28936 leave request: membership enforced (enforced),
// fresh, and NIP-70 protected. Whether the sender may leave is Leave's.
func CheckLeave(ev *nostr.Event, enforced bool, now int64) error {
	if !enforced {
		return reject.Invalidf("relay membership is not enabled in this community")
	}
	if err := Fresh(int64(ev.CreatedAt), now); err != nil {
		return err
	}
	if nip70.Protected(ev.Tags) {
		return nil
	}
	return reject.Invalidf("a leave request must carry the NIP-70 tag [\"-\"]")
}

// Leave decides whether a key of role may leave: members and admins may,
// an owner may not, a key without a role is no member (Buzz's texts).
func Leave(role string) error {
	switch role {
	case Owner:
		return reject.Invalidf("relay owner cannot leave")
	case "":
		return reject.Invalidf("you are not a relay member")
	}
	return nil
}

// Icon limits of 9033 (Buzz's): an http(s) URL up to MaxIconURL bytes, or
// an inline data:image/ URL up to MaxIconDataURL.
const (
	MaxIconURL     = 2048
	MaxIconDataURL = 98304
)

// CheckIcon checks a 9033 icon: empty (clears it), an http(s) URL or a
// data:image/ URL, without spaces or control characters.
func CheckIcon(icon string) error {
	if icon == "" {
		return nil
	}
	if strings.IndexFunc(icon, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return reject.Invalidf("icon has spaces or control characters")
	}
	max := MaxIconURL
	switch {
	case strings.HasPrefix(icon, "data:image/"):
		max = MaxIconDataURL
	case strings.HasPrefix(icon, "https://"), strings.HasPrefix(icon, "http://"):
	default:
		return reject.Invalidf("icon must be an http(s) URL or a data:image/ URL")
	}
	if len(icon) > max {
		return reject.Invalidf("icon is %d bytes, at most %d", len(icon), max)
	}
	return nil
}

// ParseSwitch reads 9033's thread_replies_in_channel value.
func ParseSwitch(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, reject.Invalidf("thread_replies_in_channel %q must be true or false", v)
}

// Entry is one key of the membership list with its role.
type Entry struct{ Pubkey, Role string }

// ListTags are the tags of the relay-signed 13534: NIP-70's marker, then
// ["member", key, role] for each entry, in the order given.
func ListTags(entries []Entry) nostr.Tags {
	tags := make(nostr.Tags, 0, len(entries)+1)
	tags = append(tags, nostr.Tag{ProtectedTag})
	for _, e := range entries {
		tags = append(tags, nostr.Tag{"member", e.Pubkey, e.Role})
	}
	return tags
}

// DeltaTags are the tags of a relay-signed 8000 or 8001 for key.
func DeltaTags(key string) nostr.Tags { return nostr.Tags{{ProtectedTag}, {"p", key}} }

package nip29

import (
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Roles, highest first.
const (
	Owner  = "owner"
	Admin  = "admin"
	Member = "member"
)

// RoleRank orders roles: owner 3, admin 2, member 1, "" 0. Any other role
// name (NIP-29 lets clients name roles) is stored and ranks as member: it
// gives no privilege.
func RoleRank(role string) int {
	switch role {
	case Owner:
		return 3
	case Admin:
		return 2
	case "":
		return 0
	}
	return 1
}

// MaxRoleLength bounds a role name.
const MaxRoleLength = 32

// RoleDescriptions are the roles this relay gives privileges to, with what
// they may do: the 39003 it publishes per group (NIP-29).
var RoleDescriptions = [][2]string{
	{Owner, "edits metadata, adds and removes users and admins, deletes events and the group, creates invites"},
	{Admin, "edits metadata, adds and removes users, deletes events, creates invites"},
	{Member, "reads and writes as the group's flags allow"},
}

// validRole reports whether r can be stored as a role name.
func validRole(r string) bool {
	if r == "" || len(r) > MaxRoleLength {
		return false
	}
	for _, c := range r {
		if c < 0x21 || c == 0x7f {
			return false
		}
	}
	return true
}

// pickRole is the role a 9000 gives out of the names it lists (NIP-29 lets
// a p tag carry several): the highest-ranked one, the first among equals.
func pickRole(names []string) (string, error) {
	best := ""
	for _, r := range names {
		if r == "" {
			continue
		}
		if !validRole(r) {
			return "", reject.Invalidf("role %q must be 1 to %d printable characters", r, MaxRoleLength)
		}
		if RoleRank(r) > RoleRank(best) {
			best = r
		}
	}
	return best, nil
}

// PutUser is a parsed kind 9000: the target and the role to give. Role is
// "" when the event names none: an existing member keeps their role and a
// new user becomes a member.
type PutUser struct {
	Pubkey, Role string
}

// ParsePutUser reads the p tag of a 9000 and its role, given either as
// NIP-29's third p element (["p", key, role]) or as a separate
// ["role", role] tag, the form Buzz clients send. Both at once must agree.
func ParsePutUser(ev *nostr.Event) (*PutUser, error) {
	var p *PutUser
	for _, t := range ev.Tags {
		if len(t) >= 2 && t[0] == "p" {
			if !eventcheck.LowerHex(t[1], 64) {
				return nil, reject.Invalidf("p tag %q is not a 64-hex public key", t[1])
			}
			p = &PutUser{Pubkey: t[1]}
			role, err := pickRole(t[2:])
			if err != nil {
				return nil, err
			}
			p.Role = role
			break
		}
	}
	if p == nil {
		return nil, reject.Invalidf("put-user needs a p tag naming the user")
	}
	if r, ok := filter.TagValue(ev.Tags, "role"); ok && r != "" {
		if p.Role != "" && p.Role != r {
			return nil, reject.Invalidf("the p tag's role %q and the role tag %q disagree", p.Role, r)
		}
		if !validRole(r) {
			return nil, reject.Invalidf("role %q must be 1 to %d printable characters", r, MaxRoleLength)
		}
		p.Role = r
	}
	return p, nil
}

// Target reads the single p tag of a 9001.
func Target(ev *nostr.Event) (string, error) {
	v, ok := filter.TagValue(ev.Tags, "p")
	if !ok {
		return "", reject.Invalidf("remove-user needs a p tag naming the user")
	}
	if !eventcheck.LowerHex(v, 64) {
		return "", reject.Invalidf("p tag %q is not a 64-hex public key", v)
	}
	return v, nil
}

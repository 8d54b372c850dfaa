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

// RoleRank orders roles: owner 3, admin 2, member 1, anything else 0.
func RoleRank(role string) int {
	switch role {
	case Owner:
		return 3
	case Admin:
		return 2
	case Member:
		return 1
	}
	return 0
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
			if len(t) >= 3 {
				p.Role = t[2]
			}
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
		p.Role = r
	}
	if p.Role != "" && RoleRank(p.Role) == 0 {
		return nil, reject.Invalidf("role %q must be owner, admin or member", p.Role)
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

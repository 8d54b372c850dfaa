package records

import (
	"time"
)

// Community is a communities row with its hostnames, sorted.
type Community struct {
	ID, Name, About, Picture string
	Operators, Hosts         []string
	Limits                   []byte
	RelayPubkey              string // "" while it has no relay key of its own
	Ciphertext               []byte
	CreatedAt                time.Time
	DisabledAt               *time.Time
	// MembershipEnforced: NIP-43, only members may use the community.
	MembershipEnforced bool
}

// Community info columns the store's CommunitiesSetInfo changes.
const (
	InfoName    = "name"
	InfoAbout   = "about"
	InfoPicture = "picture"
)

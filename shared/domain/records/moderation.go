package records

import (
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Standing is what a key is in a community now, for the door guard: banned
// or timed out (the store's bannedNow and timedOutNow), a member of any channel or on the
// allow list (media's uploaders), an operator.
type Standing struct {
	Banned, TimedOut bool
	// Member: a current member of any channel, on the allow list, or an
	// operator.
	Member bool
	// Operator: one of the community's operators (NIP-86, any blob).
	Operator bool
}

// PubkeyRule is a row of community_pubkey_rules; ExpiresAt nil: for good.
type PubkeyRule struct {
	Pubkey, Reason string
	ExpiresAt      *int64
}

// ModerationAction is one audit row.
type ModerationAction struct {
	EventID, Actor, Target, Reason string
	Kind                           int
	Expires                        *int64
	CreatedAt                      int64
}

// Report is one NIP-56 report in the queue.
type Report struct {
	ID, Reporter, TargetPubkey, TargetEvent, Type, Content, Raw string
	CreatedAt                                                   int64
	Status                                                      string
}

// The refusals of a key banned or timed out now, on every door.
var (
	ErrBanned   = reject.New(reject.Blocked, "this pubkey is banned from this community")
	ErrTimedOut = reject.New(reject.Blocked, "this pubkey is timed out in this community until the timeout expires")
)

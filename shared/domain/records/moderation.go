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
	// ResolvedBy and Resolution (the resolve's action) are set once the
	// report is closed, at ResolvedAt.
	ResolvedBy, Resolution string
	ResolvedAt             *int64
}

// Report statuses. A report resolved with the action "escalate" is shown
// as StatusEscalated (Buzz's operator queue): it is stored as resolved with
// that resolution.
const (
	StatusOpen      = "open"
	StatusResolved  = "resolved"
	StatusDismissed = "dismissed"
	StatusEscalated = "escalated"
)

// ShownStatus is the status a reader is shown: escalated for a report
// resolved by escalation, else its stored status.
func (r Report) ShownStatus() string {
	if r.Status == StatusResolved && r.Resolution == "escalate" {
		return StatusEscalated
	}
	return r.Status
}

// Restriction is a key banned or timed out now: its rule, reason, expiry
// (nil: for good), who set it (the community's relay key when unknown) and
// when.
type Restriction struct {
	Pubkey, Rule, Reason, Actor string
	ExpiresAt                   *int64
	UpdatedAt                   int64
}

// Feedback is one kind 42000 product feedback submission (its event id,
// submitter, optional category, body and tags as JSON), kept outside the
// event store.
type Feedback struct {
	EventID, Submitter, Category, Body, Status string
	Tags                                       []byte
	EventCreatedAt, ReceivedAt                 int64
}

// The refusals of a key banned or timed out now, on every door.
var (
	ErrBanned   = reject.New(reject.Blocked, "this pubkey is banned from this community")
	ErrTimedOut = reject.New(reject.Blocked, "this pubkey is timed out in this community until the timeout expires")
)

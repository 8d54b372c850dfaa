// Package resolve is the vocabulary of a report's resolution, pure: the
// statuses and actions a 9044 (Buzz's handlers/moderation_commands.rs) and
// NIP-86 resolvereport close an open NIP-56 report with, checked by one
// rule for both doors.
package resolve

import (
	"slices"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Statuses and Actions are the resolution's vocabulary.
var (
	Statuses = []string{"resolved", "dismissed"}
	Actions  = []string{"delete", "kick", "ban", "timeout", "dismiss", "escalate"}
)

// Check refuses a status outside Statuses, or an action (when given)
// outside Actions, with invalid:.
func Check(status, action string, hasAction bool) error {
	if !slices.Contains(Statuses, status) {
		return reject.Invalidf("status must be one of %v", Statuses)
	}
	if hasAction && !slices.Contains(Actions, action) {
		return reject.Invalidf("action must be one of %v", Actions)
	}
	return nil
}

package nip29

import (
	"encoding/json"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
)

// The types of Buzz's relay-signed timeline rows (kind 40099), as Buzz's
// relay writes them (block/buzz crates/buzz-relay/src/handlers/
// side_effects.rs) and its desktop app renders them
// (desktop/src/features/messages/ui/SystemMessageRow.tsx).
const (
	SystemMemberJoined      = "member_joined"      // 9000 adding a member (actor, target), 9021 admitted (actor = target)
	SystemMemberLeft        = "member_left"        // 9022 (actor), 9001 of oneself (actor, target)
	SystemMemberRemoved     = "member_removed"     // 9001 of another (actor, target)
	SystemChannelCreated    = "channel_created"    // 9007 (actor)
	SystemChannelDeleted    = "channel_deleted"    // 9008 (actor)
	SystemChannelArchived   = "channel_archived"   // 9002 ["archived","true"] (actor)
	SystemChannelUnarchived = "channel_unarchived" // 9002 ["archived","false"] (actor)
	SystemVisibilityChanged = "visibility_changed" // 9002 changing open/private (actor, visibility)
	SystemMessageDeleted    = "message_deleted"    // 9005 (actor, target_event_id, and the moderator's action_id, reason_code, public_reason tags)
)

// SystemRow is a 40099's content: a JSON object with its type and the keys
// it names; fields left empty are left out, as Buzz's relay leaves out
// what a row does not carry.
type SystemRow struct {
	Type          string `json:"type"`
	Actor         string `json:"actor,omitempty"`
	Target        string `json:"target,omitempty"`
	Visibility    string `json:"visibility,omitempty"`
	TargetEventID string `json:"target_event_id,omitempty"`
	ActionID      string `json:"action_id,omitempty"`
	ReasonCode    string `json:"reason_code,omitempty"`
	PublicReason  string `json:"public_reason,omitempty"`
}

// Content encodes the row as a 40099's content.
func (r SystemRow) Content() (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("nip29: encode system row %s: %w", r.Type, err)
	}
	return string(b), nil
}

// SystemTags are a 40099's tags: the channel's h, nothing else (Buzz's).
func SystemTags(channel string) nostr.Tags { return nostr.Tags{{"h", channel}} }

// Deleted is the message_deleted row of a 9005's target: a moderator's
// optional action_id, reason_code and public_reason tags are copied, as
// Buzz's relay copies them (the reporter never appears).
func Deleted(actor, target string, tags nostr.Tags) SystemRow {
	r := SystemRow{Type: SystemMessageDeleted, Actor: actor, TargetEventID: target}
	r.ActionID, _ = filter.TagValue(tags, "action_id")
	r.ReasonCode, _ = filter.TagValue(tags, "reason_code")
	r.PublicReason, _ = filter.TagValue(tags, "public_reason")
	return r
}

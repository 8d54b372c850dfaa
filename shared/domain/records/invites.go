package records

// GroupInvite is one invite code of a group (9009 create-invite).
type GroupInvite struct {
	Channel, Code, EventID, CreatedBy string
	CreatedAt                         int64
	ExpiresAt                         int64 // 0: never
}

// InviteState is one invite as a claim that took no use reads it, to say
// why (invite.Refusal).
type InviteState struct {
	Revoked bool
	// CreatorAllowed: its creator is still an owner or admin.
	CreatorAllowed bool
	ExpiresAt      int64
	MaxUses, Uses  int
}

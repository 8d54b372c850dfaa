package records

// GroupInvite is one invite code of a group (9009 create-invite).
type GroupInvite struct {
	Channel, Code, EventID, CreatedBy string
	CreatedAt                         int64
	ExpiresAt                         int64 // 0: never
}

// InviteUse is one invite's uses as they stand.
type InviteUse struct {
	MaxUses, Uses int
	ExpiresAt     int64
}

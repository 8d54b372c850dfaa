package records

// Seat is what a key is in one channel now, for NIP-29 LiveKit's token
// endpoint (store.ChannelMembersGetSeat).
type Seat struct {
	// Found: the channel exists (deleted or not); ChannelType its type.
	Found       bool
	ChannelType string
	Deleted     bool
	// Member: an active member of the channel; Banned: banned in the
	// community now.
	Member, Banned bool
}

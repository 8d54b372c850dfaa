package records

// Thread is the thread position stored with a channel message. For a
// reply, storing it also bumps its ancestors: reply_count on the parent,
// descendant_count and last_reply_at on every ancestor. The root row is
// updated first, so concurrent replies anywhere in one thread serialize on
// it and never deadlock or lose a count.
type Thread struct {
	ParentID, RootID string // "" for top-level messages
	Depth            int
	Broadcast        bool
}

// Summary is a thread root's counters and participants.
type Summary struct {
	Root         string
	Channel      string
	ReplyCount   int64
	Descendants  int64
	LastReplyAt  *int64
	Participants []string
}

// EventMeta is what the relay derived about an event before storing it.
type EventMeta struct {
	ChannelID string // "" for events outside any channel
	DTag      string // d tag of addressable / channel-state events
	TopLevel  bool
	Search    bool // index content for NIP-50 search
	// Thread, when set, is stored with the event in the same statement
	// (a channel message's thread metadata; see Thread).
	Thread *Thread
	// Last says the insert ends the transaction and nothing before it in
	// the transaction wrote: COMMIT is then sent with it in one round trip.
	// A repeat (inserted false) commits nothing but the caller's reads.
	Last bool
}

// EventRef is a stored event as the write rules need it.
type EventRef struct {
	ID        string
	Pubkey    string
	Kind      int
	CreatedAt int64
	ChannelID string
	DTag      string
	Deleted   bool
	// Thread position; HasThread is false for events without thread metadata.
	HasThread bool
	Depth     int
	RootID    string
	ParentID  string
}

// Row is one stored event a read returns.
type Row struct {
	ID        string
	Raw       string
	CreatedAt int64
}

// Cursor is a keyset position in (created_at DESC, id ASC) order: a read
// with it returns the rows strictly after it.
type Cursor struct {
	CreatedAt int64
	ID        string
}

// AuxRow is an aux event with what the closure needs about it.
type AuxRow struct {
	Row
	Kind    int
	Deleted bool
}

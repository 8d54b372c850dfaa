package records

// The sidebar's rows (Buzz's /buzz/v1/me/sidebar and read-state), as the
// store reads them for shared/service/query.

// UnreadScan bounds the events one channel's unread window examines, the
// newest first: past it the counts are lower bounds (at_least), as Buzz's
// relay bounds its own (a count of 100 means at least 100, its
// MAX_UNREAD_COUNT). It keeps a page of 20 channels at most 2,000 rows
// read, whatever a channel's backlog.
const UnreadScan = 100

// The contexts of a read mark besides a thread's root id.
const (
	// Timeline is a channel's top-level messages (mark_through a channel).
	Timeline = ""
	// Cut is the whole channel, its timeline and every thread
	// (mark_channel_read).
	Cut = "*"
)

// SidebarChannel is one joined channel of a sidebar page.
type SidebarChannel struct {
	ID, Name, Type   string
	Archived, Hidden bool
	// LatestID and LatestAt are its newest eligible live message (any
	// author, any depth); "" when it has none.
	LatestID string
	LatestAt int64
}

// ReadMark is a key's mark in one context of a channel: the position
// (created_at, id) of the message read through. As a floor of
// UnreadWindows, Context is unused.
type ReadMark struct {
	Channel, Context string
	At               Cursor
}

// UnreadRow is one event of a channel's unread window.
type UnreadRow struct {
	Channel, ID string
	CreatedAt   int64
	TopLevel    bool
	// Root is its thread's root ("" for a top-level message).
	Root string
	// Broadcast: it carries broadcast=1; Mention: a p tag names the
	// reader; Conversation: the reader wrote its parent or a live reply to
	// the same parent.
	Broadcast, Mention, Conversation bool
}

// ContextMessage is a message a read-state context names.
type ContextMessage struct {
	ID, Pubkey                       string
	Kind                             int
	CreatedAt                        int64
	TopLevel, Live                   bool
	Root                             string
	Broadcast, Mention, Conversation bool
}

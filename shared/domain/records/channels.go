package records

import (
	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/nip29"
)

// Channel is a channel with its stored state.
type Channel struct {
	nip29.Channel
	Deleted bool
}

// ReadPair is one (channel, reader) question for Readable.
type ReadPair struct{ Channel, Reader string }

// Rule is the channel as the access rule sees it; a nil row is a channel
// that does not exist.
func (c *Channel) Rule() access.Channel {
	if c == nil {
		return access.Channel{}
	}
	return access.Channel{Exists: true, Deleted: c.Deleted, Open: c.Visibility == nip29.Open, System: c.Type == nip29.TypeSystem,
		Restricted: c.Restricted, Hidden: c.Hidden}
}

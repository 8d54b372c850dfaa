package relay

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/negentropy"
)

// Reconcile is one NIP-77 message: NEG-OPEN (Filter and Message),
// NEG-MSG (Message) or NEG-CLOSE (Close).
type Reconcile struct {
	Sub     string
	Filter  *nostr.Filter // NEG-OPEN
	Message string        // NEG-OPEN, NEG-MSG
	Close   bool          // NEG-CLOSE
}

// Negentropy serves a NIP-77 message of c's connection: an opening or a
// round passes the door as a REQ does (guard.Read: authentication, the
// rate limits, the NIP-43 gate), and reconciles only what c may read (the
// read path's access predicate); a NEG-CLOSE passes as a CLOSE does. The
// answer is the next negentropy message ("" for NEG-CLOSE).
func (r *Relay) Negentropy(ctx context.Context, c Caller, m Reconcile) (string, error) {
	if r.Reconciler == nil || c.Connection == "" {
		return "", reject.Invalidf("NIP-77 reconciliation is served over WebSocket only")
	}
	nc := negentropy.Caller{Community: c.Community, Connection: c.Connection, Pubkey: c.Pubkey}
	if m.Close {
		return "", r.Reconciler.Close(ctx, nc, m.Sub)
	}
	if err := r.admit(ctx, c, r.door(c, guard.Read)); err != nil {
		return "", err
	}
	var out string
	var err error
	if m.Filter != nil {
		out, err = r.Reconciler.Open(ctx, nc, m.Sub, *m.Filter, m.Message)
	} else {
		out, err = r.Reconciler.Message(ctx, nc, m.Sub, m.Message)
	}
	if err != nil {
		if _, ok := reject.As(err); ok {
			return "", err
		}
		return "", fmt.Errorf("relay: negentropy %s: %w", m.Sub, err)
	}
	return out, nil
}

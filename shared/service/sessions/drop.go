package sessions

import (
	"context"
	"errors"

	"github.com/buzzrelay/relay/shared/service/wire"
)

// Drop forgets connection id, whose post failed with cause (wire.ErrGone or
// wire.ErrTimeout), and its subscriptions: no later delivery posts to it; the
// socket is hung up first when it may still be open (wire.Hangup).
func (r *Registry) Drop(ctx context.Context, s wire.Sender, id string, cause error) error {
	return errors.Join(wire.Hangup(ctx, s, id, cause), r.Close(ctx, id))
}

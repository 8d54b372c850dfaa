package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// Batch is the sender function's payload: the ids of events one commit
// stored in Community.
type Batch struct {
	Community string   `json:"community"`
	IDs       []string `json:"ids"`
}

// MaxBatchIDs bounds one batch (a commit stores the client's event and a
// few relay-signed ones).
const MaxBatchIDs = 64

// Committed is the fan-out's one call after a commit (shared/service/fanout
// Deliver): when community has a live subscription or lease, the ids of
// the stored events go to the sender function in one asynchronous invoke.
// Nothing is matched or sent here; a failure is logged (the batch's
// pushes are lost, never the publisher's write).
func (s *Service) Committed(ctx context.Context, community string, events []*nostr.Event) {
	if s == nil || s.Sender == nil {
		return
	}
	var ids []string
	for _, ev := range events {
		if kinds.Ephemeral(ev.Kind) || ev.Kind == kinds.PushSubscription || ev.Kind == kinds.PushLease {
			continue // never stored, or a subscription itself (author-only)
		}
		ids = append(ids, ev.ID)
	}
	if len(ids) == 0 {
		return
	}
	active, err := s.isActive(ctx, community)
	if err != nil {
		s.log().ErrorContext(ctx, "push: subscriptions of the community", "community", community, "err", err)
		return
	}
	if !active {
		return
	}
	if len(ids) > MaxBatchIDs {
		ids = ids[:MaxBatchIDs]
	}
	payload, err := json.Marshal(Batch{Community: community, IDs: ids})
	if err == nil {
		err = s.Sender.InvokeAsync(ctx, payload)
	}
	if err != nil {
		s.log().ErrorContext(ctx, "push: hand the batch to the sender", "community", community, "events", len(ids), "err", err)
	}
}

// ErrBadBatch is a payload that is not a push batch: not worth a retry.
var ErrBadBatch = errors.New("push: not a push batch")

func parseBatch(payload []byte) (Batch, error) {
	var b Batch
	if err := json.Unmarshal(payload, &b); err != nil {
		return b, fmt.Errorf("%w: %v", ErrBadBatch, err)
	}
	if b.Community == "" || len(b.IDs) == 0 || len(b.IDs) > MaxBatchIDs {
		return b, fmt.Errorf("%w: community %q, %d ids", ErrBadBatch, b.Community, len(b.IDs))
	}
	for _, id := range b.IDs {
		if len(id) != 64 {
			return b, fmt.Errorf("%w: id %q", ErrBadBatch, id)
		}
	}
	return b, nil
}

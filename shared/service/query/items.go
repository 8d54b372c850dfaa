package query

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Items serves a NIP-77 reconciliation's item set: the (created_at, id)
// of the events any of filters matches that reader may see, oldest first,
// at most max of them. The filters are validated and refused as a REQ's
// (CheckFilters: the same limits, and what reader may not ask); their
// limits are ignored, as COUNT ignores them, since a reconciliation covers
// every match.
func (e *Engine) Items(ctx context.Context, community, reader string, filters []nostr.Filter, max int) ([]store.Item, error) {
	ps, err := nostrPlans(filters, reader)
	if err != nil {
		return nil, err
	}
	reads := make([]*store.PlainRead, len(ps))
	for i, p := range ps {
		reads[i] = p.read()
	}
	items, err := e.st.EventsListItems(e.traced(ctx), community, reader, reads, max)
	if err != nil {
		return nil, fmt.Errorf("query: items: %w", err)
	}
	return items, nil
}

package query

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// plainPlan is a NIP-01 filter with before_id, page and search.
type plainPlan struct {
	f      *bridgeFilter
	limit  int64
	offset int64
}

func newPlainPlan(f *bridgeFilter, max int64) (*plainPlan, error) {
	if f.BeforeID != "" && f.Until == nil {
		return nil, invalid("before_id requires until")
	}
	p := &plainPlan{f: f, limit: max}
	if f.Limit != nil && *f.Limit < max {
		p.limit = *f.Limit
	}
	if f.Page > 1 {
		if f.Page > relayinfo.MaxPage {
			return nil, invalid("page must be at most 1000000")
		}
		p.offset = (f.Page - 1) * p.limit
	}
	return p, nil
}

func (p *plainPlan) read() *store.PlainRead {
	return &store.PlainRead{Filter: &p.f.Filter, BeforeID: p.f.BeforeID, Limit: p.limit, Offset: p.offset}
}

func (p *plainPlan) serve(ctx context.Context, _ *Engine, s *store.Snapshot, out *output) error {
	rows, err := s.Plain(ctx, p.read())
	if err != nil {
		return err
	}
	for _, r := range rows {
		out.add(r.ID, r.Raw)
	}
	return nil
}

// counted is the read COUNT counts: every match, limit and page ignored.
func (p *plainPlan) counted() store.Countable { return p.read() }

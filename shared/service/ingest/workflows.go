package ingest

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// WorkflowRules is shared/service/workflow's rules for Buzz's workflow
// kinds, run in the event's transaction: a 30620 (Define: its checks,
// then storeEvent, then its row; the OK's note), the deletion of one
// (Deleted), a 46020 (Trigger) and a 46030/46031 (Decide), the last two
// answering the channel the event is filed in.
type WorkflowRules interface {
	Define(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64, storeEvent func() error) (string, error)
	Deleted(ctx context.Context, tx *store.Tx, pubkey, d string, now int64) error
	Trigger(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64) (note, channel string, err error)
	Decide(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64) (note, channel string, err error)
}

// WithWorkflows returns a copy of s whose workflow kinds are w's.
func (s *Service) WithWorkflows(w WorkflowRules) *Service {
	c := *s
	c.workflows = w
	return &c
}

var errNoWorkflows = reject.New(reject.Restricted, "this relay runs no workflows here")

// workflowDef stores a 30620 as its workflow (Define), by the
// addressable rule.
func (a *apply) workflowDef(ctx context.Context) error {
	if a.s.workflows == nil {
		return a.replaceable(ctx)
	}
	note, err := a.s.workflows.Define(ctx, a.tx, a.ev, a.now, func() error { return a.replaceable(ctx) })
	if err != nil {
		return err
	}
	a.note = note
	return nil
}

// workflowCommand applies a 46020 or a 46030/46031 and stores it in the
// workflow's channel.
func (a *apply) workflowCommand(ctx context.Context) error {
	if a.s.workflows == nil {
		return errNoWorkflows
	}
	rule := a.s.workflows.Decide
	if a.ev.Kind == kinds.WorkflowTrigger {
		rule = a.s.workflows.Trigger
	}
	note, channel, err := rule(ctx, a.tx, a.ev, a.now)
	if err != nil {
		return err
	}
	ok, err := a.tx.EventsInsert(ctx, a.ev, records.EventMeta{ChannelID: channel, TopLevel: true})
	if err != nil {
		return err
	}
	if !ok {
		return reject.Duplicatef("event %s is already stored", a.ev.ID)
	}
	a.note = note
	return nil
}

// workflowDeleted tells the workflow rules a kind 5 deleted a 30620.
func (a *apply) workflowDeleted(ctx context.Context, pubkey, d string) error {
	if a.s.workflows == nil {
		return nil
	}
	return a.s.workflows.Deleted(ctx, a.tx, pubkey, d, a.now)
}

package manage

import (
	"context"
	"errors"
	"slices"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
)

// The reads of Buzz desktop's moderation pane (GET /moderation/reports,
// /moderation/audit, /moderation/restricted) and admin console
// (/api/admin/v1/*): the community's report queue, audit log, restrictions
// in force and kind 42000 feedback, for its operators only, through the
// same door as every NIP-86 call (admit). What the admin console changes
// is a NIP-86 call (Serve): one rule, two doors.

// MaxRead bounds one moderation read (Buzz's relay clamps ?limit= to 500,
// and answers 500 rows when none is asked).
const MaxRead = 500

// ReadLimit is the rows a read answers for asked (0 or less: MaxRead; more
// than MaxRead: MaxRead), as Buzz clamps ?limit=.
func ReadLimit(asked int) int {
	if asked <= 0 || asked > MaxRead {
		return MaxRead
	}
	return asked
}

// ReportStatuses are the statuses a report list may be filtered by.
var ReportStatuses = []string{records.StatusOpen, records.StatusResolved, records.StatusDismissed, records.StatusEscalated}

// ErrNoSuchItem answers an admin id that names no report or feedback of
// the community (the same answer for one of another community's).
var ErrNoSuchItem = reject.Invalidf("no such item in this community")

// ErrReportState is the kind of refusal of a report change its status
// forbids (resolving a closed report, reopening an open one): the admin
// API answers it 409, as Buzz's relay does.
var ErrReportState = errors.New("manage: the report's status forbids it")

// stateRefusal is refusal r, of kind ErrReportState.
func stateRefusal(r *reject.Error) error { return &stateError{r} }

type stateError struct{ r *reject.Error }

func (e *stateError) Error() string   { return e.r.Error() }
func (e *stateError) Unwrap() []error { return []error{e.r, ErrReportState} }

// MaxRequestID bounds a client's idempotency key (the admin console's
// requestId is a UUID).
const MaxRequestID = 64

// ReportTargets are the target kinds a report list may be filtered by
// (Buzz's; a report here names an event or a pubkey, never a blob).
var ReportTargets = []string{"event", "pubkey", "blob"}

// ReportFilter is one read of the report queue (store.ReportPage).
type ReportFilter = store.ReportPage

// Reports lists a page of community c's reports newest first: p's filters
// (store.ReportPage; Status "" any, else one of ReportStatuses; Target
// one of ReportTargets), at most ReadLimit(p.Limit).
func (s *Service) Reports(ctx context.Context, c *community.Community, pubkey string, p ReportFilter) ([]records.Report, error) {
	if err := s.admit(ctx, c, pubkey); err != nil {
		return nil, err
	}
	if p.Status != "" && !slices.Contains(ReportStatuses, p.Status) {
		return nil, reject.Invalidf("status must be one of %v", ReportStatuses)
	}
	if p.Target != "" && !slices.Contains(ReportTargets, p.Target) {
		return nil, reject.Invalidf("targetKind must be one of %v", ReportTargets)
	}
	if p.Target == "blob" {
		return []records.Report{}, nil
	}
	p.Newest, p.Limit = true, ReadLimit(p.Limit)
	return s.Store.ModerationReportsList(ctx, c.ID, p)
}

// Report is community c's report whose id begins with prefix (the 32 hex
// digits of an admin id); ErrNoSuchItem when there is none.
func (s *Service) Report(ctx context.Context, c *community.Community, pubkey, prefix string) (records.Report, error) {
	if err := s.admit(ctx, c, pubkey); err != nil {
		return records.Report{}, err
	}
	if !eventcheck.LowerHex(prefix, 32) {
		return records.Report{}, ErrNoSuchItem
	}
	r, ok, err := s.Store.ModerationReportsGet(ctx, c.ID, prefix)
	if err == nil && !ok {
		err = ErrNoSuchItem
	}
	return r, err
}

// Audit lists community c's moderation actions newest first, at most limit
// (ReadLimit).
func (s *Service) Audit(ctx context.Context, c *community.Community, pubkey string, limit int) ([]records.ModerationAction, error) {
	if err := s.admit(ctx, c, pubkey); err != nil {
		return nil, err
	}
	return s.Store.ModerationActionsListPage(ctx, c.ID, true, ReadLimit(limit))
}

// Restricted lists community c's keys banned or timed out now.
func (s *Service) Restricted(ctx context.Context, c *community.Community, pubkey string) ([]records.Restriction, error) {
	if err := s.admit(ctx, c, pubkey); err != nil {
		return nil, err
	}
	return s.Store.PubkeyRulesListRestricted(ctx, c.ID)
}

// FeedbackPage is how many feedback submissions one list answers (Buzz's
// admin API lists 100).
const FeedbackPage = 100

// FeedbackStatuses are the statuses an operator may give feedback.
var FeedbackStatuses = []string{"new", "reviewed", "archived"}

// Feedback lists community c's kind 42000 feedback newest first
// (FeedbackPage of them).
func (s *Service) Feedback(ctx context.Context, c *community.Community, pubkey string) ([]records.Feedback, error) {
	if err := s.admit(ctx, c, pubkey); err != nil {
		return nil, err
	}
	return s.Store.ProductFeedbackList(ctx, c.ID, FeedbackPage)
}

// FeedbackItem is community c's feedback whose event id begins with prefix
// (32 hex digits); ErrNoSuchItem when there is none.
func (s *Service) FeedbackItem(ctx context.Context, c *community.Community, pubkey, prefix string) (records.Feedback, error) {
	if err := s.admit(ctx, c, pubkey); err != nil {
		return records.Feedback{}, err
	}
	if !eventcheck.LowerHex(prefix, 32) {
		return records.Feedback{}, ErrNoSuchItem
	}
	f, ok, err := s.Store.ProductFeedbackGet(ctx, c.ID, prefix)
	if err == nil && !ok {
		err = ErrNoSuchItem
	}
	return f, err
}

// SetFeedbackStatus gives community c's feedback (prefix as FeedbackItem)
// status, one of FeedbackStatuses, and answers it as it now stands.
func (s *Service) SetFeedbackStatus(ctx context.Context, c *community.Community, pubkey, prefix, status string) (records.Feedback, error) {
	f, err := s.FeedbackItem(ctx, c, pubkey, prefix)
	if err != nil {
		return f, err
	}
	if !slices.Contains(FeedbackStatuses, status) {
		return f, reject.Invalidf("status must be one of %v", FeedbackStatuses)
	}
	if _, err := s.Store.ProductFeedbackSetStatus(ctx, c.ID, f.EventID, status); err != nil {
		return f, err
	}
	f.Status = status
	return f, nil
}

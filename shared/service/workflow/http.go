package workflow

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	wf "github.com/buzzrelay/relay/shared/domain/workflow"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/guard"
)

// The HTTP use cases, answered as Buzz's relay answers them
// (crates/buzz-relay/src/api/workflows.rs and its webhook route).

func refusal(status int, p reject.Prefix, text string) error {
	r := reject.New(p, "%s", text)
	r.Status = status
	return r
}

var (
	errNotFound      = refusal(http.StatusNotFound, reject.Invalid, "workflow not found")
	errRunNotFound   = refusal(http.StatusNotFound, reject.Invalid, "workflow run not found")
	errSecret        = refusal(http.StatusUnauthorized, reject.AuthRequired, "invalid webhook secret")
	errNotAccessible = refusal(http.StatusForbidden, reject.Restricted, "workflow is not accessible")
	errDisabled      = refusal(http.StatusConflict, reject.Invalid, "workflow is disabled (enabled: false)")
)

// Hook is POST /hooks/{id}: the webhook secret (the X-Webhook-Secret
// header or ?secret=) checked against the stored hash, then SEC-006 (a
// refused owner looks like no workflow: 404), then a run with the body's
// JSON object fields as trigger.X, handed to the runner. It answers the
// run's id (202).
func (s *Service) Hook(ctx context.Context, community, id, secret string, body []byte) (string, error) {
	wid, err := uuid.Parse(id)
	if err != nil {
		return "", errNotFound
	}
	w, err := s.Store.WorkflowsGet(ctx, community, wid.String())
	if errors.Is(err, records.ErrNotFound) || (err == nil && (w.Deleted || w.TriggerOn != wf.OnWebhook)) {
		return "", errNotFound
	}
	if err != nil {
		return "", err
	}
	if !wf.SecretMatches(secret, w.SecretHash) {
		return "", errSecret
	}
	if !w.Enabled {
		return "", errDisabled
	}
	auth, err := s.Store.ChannelMembersGetAuthority(ctx, community, w.Channel, w.Owner)
	if err != nil {
		return "", err
	}
	if wf.CheckOwner(auth, w.Elevated) != nil {
		return "", errNotFound
	}
	fields := map[string]string{}
	if len(body) > 0 {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return "", reject.Invalidf("body must be a JSON object")
		}
		for k, v := range m {
			if str, ok := v.(string); ok {
				fields[k] = str
			} else {
				b, _ := json.Marshal(v)
				fields[k] = string(b)
			}
		}
	}
	now := s.clock().Unix()
	run := &wf.Run{ID: uuid.NewString(), WorkflowID: w.ID, TriggerKind: wf.ByWebhook, Definition: w.Definition, CreatedAt: now,
		Trigger: wf.TriggerContext{ChannelID: w.Channel, Timestamp: strconv.FormatInt(now, 10), WebhookFields: fields}}
	run.TriggerKey = "webhook:" + run.ID
	if err := s.Store.Tx(ctx, community, func(tx *store.Tx) error {
		_, _, err := tx.WorkflowRunsInsert(ctx, run)
		return err
	}); err != nil {
		return "", err
	}
	s.invoke(ctx, Batch{Community: community, Run: run.ID})
	return run.ID, nil
}

// RunsQuery is GET /workflows/{id}/runs's page: before and before_id
// together (a keyset), limit 1 to 100 (default 20).
type RunsQuery struct {
	Before   int64
	BeforeID string
	Limit    int
}

// Run limits, as Buzz's.
const (
	DefaultRunLimit = 20
	MaxRunLimit     = 100
)

// CheckRunsQuery refuses a page Buzz refuses (400).
func CheckRunsQuery(q *RunsQuery, hasBefore, hasBeforeID bool) error {
	if hasBefore != hasBeforeID {
		return reject.Invalidf("before and before_id must be supplied together")
	}
	if q.Limit == 0 {
		q.Limit = DefaultRunLimit
	}
	if q.Limit < 1 || q.Limit > MaxRunLimit {
		return reject.Invalidf("limit must be between 1 and 100")
	}
	return nil
}

// authorize is Buzz's authorize_workflow_read: the door (guard.Read),
// the workflow in this community (404), the caller a member of its
// channel now (403).
func (s *Service) authorize(ctx context.Context, caller guard.Caller, community, id string) (*wf.Workflow, error) {
	if s.Guard != nil {
		if _, err := s.Guard.Admit(ctx, guard.Door{Community: community, Caller: caller, Action: guard.Read}); err != nil {
			return nil, err
		}
	}
	wid, err := uuid.Parse(id)
	if err != nil {
		return nil, errNotFound
	}
	w, err := s.Store.WorkflowsGet(ctx, community, wid.String())
	if errors.Is(err, records.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	a, err := s.Store.ChannelMembersGetAuthority(ctx, community, w.Channel, caller.Pubkey)
	if err != nil {
		return nil, err
	}
	if a.Gone || a.Role == "" || a.Banned {
		return nil, errNotAccessible
	}
	return w, nil
}

// RunWire is a run as Buzz's route answers it.
type RunWire struct {
	ID             string           `json:"id"`
	WorkflowID     string           `json:"workflow_id"`
	Status         string           `json:"status"`
	CurrentStep    int              `json:"current_step"`
	ExecutionTrace []map[string]any `json:"execution_trace"`
	StartedAt      *int64           `json:"started_at"`
	CompletedAt    *int64           `json:"completed_at"`
	ErrorCode      *string          `json:"error_code"`
	ErrorMessage   *string          `json:"error_message"`
	CreatedAt      int64            `json:"created_at"`
}

// RunsPage is GET /workflows/{id}/runs's answer.
type RunsPage struct {
	Runs []RunWire     `json:"runs"`
	Next *RunsPageNext `json:"next"`
}

// RunsPageNext is the keyset of the next page.
type RunsPageNext struct {
	Before   int64  `json:"before"`
	BeforeID string `json:"before_id"`
}

// Runs is GET /workflows/{id}/runs: a page of the workflow's runs, newest
// first, each with its trace.
func (s *Service) Runs(ctx context.Context, caller guard.Caller, community, id string, q RunsQuery) (*RunsPage, error) {
	w, err := s.authorize(ctx, caller, community, id)
	if err != nil {
		return nil, err
	}
	runs, err := s.Store.WorkflowRunsList(ctx, community, w.ID, q.Before, q.BeforeID, q.Limit+1)
	if err != nil {
		return nil, err
	}
	page := &RunsPage{Runs: []RunWire{}}
	if len(runs) > q.Limit {
		runs = runs[:q.Limit]
		last := runs[len(runs)-1]
		page.Next = &RunsPageNext{Before: last.CreatedAt, BeforeID: last.ID}
	}
	for _, r := range runs {
		steps, err := s.Store.WorkflowStepsList(ctx, community, r.ID)
		if err != nil {
			return nil, err
		}
		page.Runs = append(page.Runs, RunWire{ID: r.ID, WorkflowID: r.WorkflowID, Status: r.Status, CurrentStep: r.CurrentStep,
			ExecutionTrace: wf.Trace(steps), StartedAt: nonZero(r.StartedAt), CompletedAt: nonZero(r.CompletedAt),
			ErrorCode: nonEmpty(r.ErrorCode), ErrorMessage: nonEmpty(r.ErrorMessage), CreatedAt: r.CreatedAt})
	}
	return page, nil
}

// ApprovalWire is an approval as Buzz's route answers it (approval_ref:
// the token's SHA-256, never the token).
type ApprovalWire struct {
	ApprovalRef    string  `json:"approval_ref"`
	WorkflowID     string  `json:"workflow_id"`
	RunID          string  `json:"run_id"`
	StepID         string  `json:"step_id"`
	StepIndex      int     `json:"step_index"`
	ApproverSpec   string  `json:"approver_spec"`
	Status         string  `json:"status"`
	ApproverPubkey *string `json:"approver_pubkey"`
	Note           *string `json:"note"`
	ExpiresAt      int64   `json:"expires_at"`
	CreatedAt      int64   `json:"created_at"`
}

// Approvals is GET /workflows/{id}/runs/{run}/approvals.
func (s *Service) Approvals(ctx context.Context, caller guard.Caller, community, id, runID string) ([]ApprovalWire, error) {
	w, err := s.authorize(ctx, caller, community, id)
	if err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(runID); err != nil {
		return nil, errRunNotFound
	}
	run, err := s.Store.WorkflowRunsGet(ctx, community, runID)
	if errors.Is(err, records.ErrNotFound) || (err == nil && run.WorkflowID != w.ID) {
		return nil, errRunNotFound
	}
	if err != nil {
		return nil, err
	}
	as, err := s.Store.WorkflowApprovalsList(ctx, community, run.ID)
	if err != nil {
		return nil, err
	}
	out := []ApprovalWire{}
	for _, a := range as {
		out = append(out, ApprovalWire{ApprovalRef: hex.EncodeToString(a.TokenHash), WorkflowID: a.WorkflowID, RunID: a.RunID,
			StepID: a.StepID, StepIndex: a.StepIndex, ApproverSpec: a.ApproverSpec, Status: a.Status,
			ApproverPubkey: nonEmpty(a.Approver), Note: nonEmpty(a.Note), ExpiresAt: a.ExpiresAt, CreatedAt: a.CreatedAt})
	}
	return out, nil
}

func nonZero(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

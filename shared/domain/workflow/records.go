package workflow

import "encoding/json"

// Workflow is a stored definition's row (migrations: workflows).
type Workflow struct {
	ID, Channel, Owner, Name, EventID string
	Definition                        json.RawMessage // canonical JSON
	TriggerOn                         string
	Enabled, Elevated                 bool
	SecretHash                        []byte // a webhook workflow's; nil otherwise
	Schedule                          string // the EventBridge expression; "" none
	CreatedAt, UpdatedAt              int64
	Deleted                           bool
}

// Run statuses, as Buzz's RunStatus names them (waiting: a delay).
const (
	RunPending         = "pending"
	RunRunning         = "running"
	RunWaiting         = "waiting"
	RunWaitingApproval = "waiting_approval"
	RunCompleted       = "completed"
	RunFailed          = "failed"
	RunCancelled       = "cancelled"
)

// Trigger kinds of a run.
const (
	ByMessage  = "message"
	BySchedule = "schedule"
	ByWebhook  = "webhook"
	ByManual   = "manual"
)

// Run is a run's row (workflow_runs).
type Run struct {
	ID, WorkflowID, TriggerKey, TriggerKind string
	Trigger                                 TriggerContext
	Definition                              json.RawMessage
	Status                                  string
	CurrentStep                             int
	ErrorCode, ErrorMessage                 string
	WakeAt                                  int64 // 0: none
	CreatedAt, StartedAt, CompletedAt       int64 // 0: not yet
}

// Step statuses of a step row (workflow_steps).
const (
	StepStarted   = "started"
	StepCompleted = "completed"
	StepSkipped   = "skipped"
	StepFailed    = "failed"
	StepWaiting   = "waiting"
)

// StepRow is one step a run reached.
type StepRow struct {
	Index                  int
	StepID, Status         string
	Output                 map[string]any
	Error, EffectID        string
	StartedAt, CompletedAt int64
}

// Approval statuses.
const (
	ApprovalPending = "pending"
	ApprovalGranted = "granted"
	ApprovalDenied  = "denied"
	ApprovalExpired = "expired"
)

// Approval is an approval gate's row (workflow_approvals).
type Approval struct {
	TokenHash                       []byte
	RunID, WorkflowID               string
	StepIndex                       int
	StepID, ApproverSpec, Message   string
	Status, Approver, Note          string
	ExpiresAt, CreatedAt, DecidedAt int64
}

// Trace is a run's execution trace as Buzz stores it: one entry per step
// completed or skipped ({step_id, status, output?}).
func Trace(steps []StepRow) []map[string]any {
	out := []map[string]any{}
	for _, s := range steps {
		if s.Status != StepCompleted && s.Status != StepSkipped {
			continue
		}
		e := map[string]any{"step_id": s.StepID, "status": s.Status}
		if s.Status == StepCompleted {
			e["output"] = s.Output
		}
		out = append(out, e)
	}
	return out
}

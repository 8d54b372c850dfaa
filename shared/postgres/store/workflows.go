package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/workflow"
)

// Workflows (migrations/031_workflows.sql): definitions (workflows), runs
// (workflow_runs), their steps (workflow_steps) and approval gates
// (workflow_approvals). The rules are shared/service/workflow's; the write
// transaction of a 30620, 46020 or 46030/46031 writes through *Tx, the
// runner and the routes through *Store.

const workflowCols = `id, channel_id, owner, name, event_id, definition, trigger_on, enabled, elevated,
 secret_hash, coalesce(schedule, ''), created_at, updated_at, deleted_at IS NOT NULL`

func scanWorkflow(r pgx.Row) (*workflow.Workflow, error) {
	w := &workflow.Workflow{}
	err := r.Scan(&w.ID, &w.Channel, &w.Owner, &w.Name, &w.EventID, &w.Definition, &w.TriggerOn, &w.Enabled,
		&w.Elevated, &w.SecretHash, &w.Schedule, &w.CreatedAt, &w.UpdatedAt, &w.Deleted)
	return w, err
}

// WorkflowsGet reads workflow id (deleted ones too: Deleted says so);
// records.ErrNotFound when there is none.
func (t *Tx) WorkflowsGet(ctx context.Context, id string) (*workflow.Workflow, error) {
	w, err := scanWorkflow(t.tx.QueryRow(ctx, `SELECT `+workflowCols+` FROM workflows WHERE community_id = $1 AND id = $2`, t.community, id))
	if err != nil {
		return nil, errorf("workflow %s: %w", id, err)
	}
	return w, nil
}

// WorkflowsGet is Tx.WorkflowsGet outside a transaction.
func (s *Store) WorkflowsGet(ctx context.Context, community, id string) (*workflow.Workflow, error) {
	w, err := scanWorkflow(s.pool.QueryRow(ctx, `SELECT `+workflowCols+` FROM workflows WHERE community_id = $1 AND id = $2`, community, id))
	if err != nil {
		return nil, errorf("workflow %s: %w", id, err)
	}
	return w, nil
}

// WorkflowsUpsert stores w as its workflow's definition now (a deleted one
// defined again comes back); the secret hash is kept when w has none.
func (t *Tx) WorkflowsUpsert(ctx context.Context, w *workflow.Workflow) error {
	_, err := t.tx.Exec(ctx, `
INSERT INTO workflows (community_id, id, channel_id, owner, name, event_id, definition, trigger_on, enabled, elevated,
  secret_hash, schedule, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, nullif($12, ''), $13, $13)
ON CONFLICT (community_id, id) DO UPDATE SET name = excluded.name, event_id = excluded.event_id,
  definition = excluded.definition, trigger_on = excluded.trigger_on, enabled = excluded.enabled,
  elevated = excluded.elevated, secret_hash = coalesce(excluded.secret_hash, workflows.secret_hash),
  schedule = excluded.schedule, updated_at = excluded.updated_at, deleted_at = NULL`,
		t.community, w.ID, w.Channel, w.Owner, w.Name, w.EventID, w.Definition, w.TriggerOn, w.Enabled, w.Elevated,
		w.SecretHash, w.Schedule, w.UpdatedAt)
	if err != nil {
		return errorf("upsert workflow %s: %w", w.ID, err)
	}
	return nil
}

// WorkflowsDelete marks owner's workflow id deleted at now; it reports
// whether one was live.
func (t *Tx) WorkflowsDelete(ctx context.Context, owner, id string, now int64) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE workflows SET deleted_at = $4, updated_at = $4
WHERE community_id = $1 AND id = $2 AND owner = $3 AND `+notDeleted, t.community, id, owner, now)
	if err != nil {
		return false, errorf("delete workflow %s: %w", id, err)
	}
	return tag.RowsAffected() > 0, nil
}

// WorkflowsListChannel reads the enabled, not deleted workflows of channel
// triggered by one of ons.
func (s *Store) WorkflowsListChannel(ctx context.Context, community, channel string, ons []string) ([]*workflow.Workflow, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+workflowCols+` FROM workflows
WHERE community_id = $1 AND channel_id = $2 AND `+notDeleted+` AND enabled AND trigger_on = ANY ($3::text[])
ORDER BY id`, community, channel, ons)
	if err != nil {
		return nil, errorf("workflows of %s: %w", channel, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*workflow.Workflow, error) { return scanWorkflow(r) })
	if err != nil {
		return nil, errorf("workflows of %s: %w", channel, err)
	}
	return out, nil
}

// WorkflowsExists reports whether community has a live workflow.
func (s *Store) WorkflowsExists(ctx context.Context, community string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workflows WHERE community_id = $1 AND `+notDeleted+` AND enabled)`, community).Scan(&ok)
	if err != nil {
		return false, errorf("workflows of %s: %w", community, err)
	}
	return ok, nil
}

const runCols = `id::text, workflow_id, trigger_key, trigger_kind, trigger_ctx, definition, status, current_step,
 coalesce(error_code, ''), coalesce(error_message, ''), coalesce(wake_at, 0), created_at, coalesce(started_at, 0), coalesce(completed_at, 0)`

func scanRun(r pgx.Row) (*workflow.Run, error) {
	run := &workflow.Run{}
	var ctxJSON []byte
	err := r.Scan(&run.ID, &run.WorkflowID, &run.TriggerKey, &run.TriggerKind, &ctxJSON, &run.Definition, &run.Status,
		&run.CurrentStep, &run.ErrorCode, &run.ErrorMessage, &run.WakeAt, &run.CreatedAt, &run.StartedAt, &run.CompletedAt)
	if err == nil {
		err = json.Unmarshal(ctxJSON, &run.Trigger)
	}
	return run, err
}

// WorkflowRunsInsert stores run unless its workflow has a run of the same
// trigger key; it returns the run of that key (the new one, or the one
// stored before) and whether it is new.
func (t *Tx) WorkflowRunsInsert(ctx context.Context, run *workflow.Run) (string, bool, error) {
	trig, err := json.Marshal(run.Trigger)
	if err != nil {
		return "", false, errorf("run trigger: %w", err)
	}
	var id string
	var created bool
	err = t.tx.QueryRow(ctx, `
WITH ins AS (
  INSERT INTO workflow_runs (community_id, id, workflow_id, trigger_key, trigger_kind, trigger_ctx, definition, status, created_at)
  VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, 'pending', $8)
  ON CONFLICT (community_id, workflow_id, trigger_key) DO NOTHING RETURNING id::text)
SELECT id, true FROM ins
UNION ALL
SELECT id::text, false FROM workflow_runs WHERE community_id = $1 AND workflow_id = $3 AND trigger_key = $4
LIMIT 1`, t.community, run.ID, run.WorkflowID, run.TriggerKey, run.TriggerKind, trig, run.Definition, run.CreatedAt).Scan(&id, &created)
	if err != nil {
		return "", false, errorf("insert run of %s: %w", run.WorkflowID, err)
	}
	return id, created, nil
}

// WorkflowRunsGet reads run id of community; records.ErrNotFound when
// there is none.
func (s *Store) WorkflowRunsGet(ctx context.Context, community, id string) (*workflow.Run, error) {
	run, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+` FROM workflow_runs WHERE community_id = $1 AND id::text = $2`, community, id))
	if err != nil {
		return nil, errorf("run %s: %w", id, err)
	}
	return run, nil
}

// WorkflowRunsGetByTrigger reads the run workflow started for trigger key.
func (s *Store) WorkflowRunsGetByTrigger(ctx context.Context, community, workflowID, key string) (*workflow.Run, error) {
	run, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+` FROM workflow_runs
WHERE community_id = $1 AND workflow_id = $2 AND trigger_key = $3`, community, workflowID, key))
	if err != nil {
		return nil, errorf("run of %s by %s: %w", workflowID, key, err)
	}
	return run, nil
}

// WorkflowRunsLock reads and locks run id for this transaction, skipping
// a run another transaction holds (ok false: someone is running it).
func (t *Tx) WorkflowRunsLock(ctx context.Context, id string) (*workflow.Run, bool, error) {
	run, err := scanRun(t.tx.QueryRow(ctx, `SELECT `+runCols+` FROM workflow_runs
WHERE community_id = $1 AND id::text = $2 FOR UPDATE SKIP LOCKED`, t.community, id))
	if err != nil {
		err = errorf("lock run %s: %w", id, err)
		if notFound(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return run, true, nil
}

// WorkflowRunsUpdate writes run's status, current step, error and wake.
func (t *Tx) WorkflowRunsUpdate(ctx context.Context, run *workflow.Run) error {
	_, err := t.tx.Exec(ctx, `UPDATE workflow_runs SET status = $3, current_step = $4, error_code = nullif($5, ''),
  error_message = nullif($6, ''), wake_at = nullif($7, 0), started_at = nullif($8, 0), completed_at = nullif($9, 0)
WHERE community_id = $1 AND id::text = $2`, t.community, run.ID, run.Status, run.CurrentStep, run.ErrorCode,
		run.ErrorMessage, run.WakeAt, run.StartedAt, run.CompletedAt)
	if err != nil {
		return errorf("update run %s: %w", run.ID, err)
	}
	return nil
}

// WorkflowRunsList reads a page of workflow's runs, newest first, before
// (created_at, id) when before is not 0.
func (s *Store) WorkflowRunsList(ctx context.Context, community, workflowID string, before int64, beforeID string, limit int) ([]*workflow.Run, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+runCols+` FROM workflow_runs
WHERE community_id = $1 AND workflow_id = $2 AND ($3 = 0 OR (created_at, id::text) < ($3, $4))
ORDER BY created_at DESC, id::text DESC LIMIT $5`, community, workflowID, before, beforeID, limit)
	if err != nil {
		return nil, errorf("runs of %s: %w", workflowID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*workflow.Run, error) { return scanRun(r) })
	if err != nil {
		return nil, errorf("runs of %s: %w", workflowID, err)
	}
	return out, nil
}

// WorkflowStepsGet reads step index of run (ok false: not reached).
func (t *Tx) WorkflowStepsGet(ctx context.Context, run string, index int) (*workflow.StepRow, bool, error) {
	st := &workflow.StepRow{}
	var out []byte
	err := t.tx.QueryRow(ctx, `SELECT step_index, step_id, status, output, coalesce(error, ''), coalesce(effect_id, ''),
  started_at, coalesce(completed_at, 0) FROM workflow_steps WHERE community_id = $1 AND run_id::text = $2 AND step_index = $3`,
		t.community, run, index).Scan(&st.Index, &st.StepID, &st.Status, &out, &st.Error, &st.EffectID, &st.StartedAt, &st.CompletedAt)
	if err != nil {
		err = errorf("step %d of %s: %w", index, run, err)
		if notFound(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	if len(out) > 0 {
		_ = json.Unmarshal(out, &st.Output)
	}
	return st, true, nil
}

// WorkflowStepsPut writes step st of run as given.
func (t *Tx) WorkflowStepsPut(ctx context.Context, run string, st *workflow.StepRow) error {
	var out []byte
	if st.Output != nil {
		var err error
		if out, err = json.Marshal(st.Output); err != nil {
			return errorf("step output: %w", err)
		}
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO workflow_steps (community_id, run_id, step_index, step_id, status, output, error, effect_id, started_at, completed_at)
VALUES ($1, $2::uuid, $3, $4, $5, $6, nullif($7, ''), nullif($8, ''), $9, nullif($10, 0))
ON CONFLICT (community_id, run_id, step_index) DO UPDATE SET status = excluded.status, output = excluded.output,
  error = excluded.error, effect_id = excluded.effect_id, completed_at = excluded.completed_at`,
		t.community, run, st.Index, st.StepID, st.Status, out, st.Error, st.EffectID, st.StartedAt, st.CompletedAt)
	if err != nil {
		return errorf("put step %d of %s: %w", st.Index, run, err)
	}
	return nil
}

// WorkflowStepsList reads the steps run reached, in order.
func (s *Store) WorkflowStepsList(ctx context.Context, community, run string) ([]workflow.StepRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT step_index, step_id, status, output, coalesce(error, ''), coalesce(effect_id, ''),
  started_at, coalesce(completed_at, 0) FROM workflow_steps WHERE community_id = $1 AND run_id::text = $2 ORDER BY step_index`, community, run)
	if err != nil {
		return nil, errorf("steps of %s: %w", run, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (workflow.StepRow, error) {
		var st workflow.StepRow
		var o []byte
		err := r.Scan(&st.Index, &st.StepID, &st.Status, &o, &st.Error, &st.EffectID, &st.StartedAt, &st.CompletedAt)
		if err == nil && len(o) > 0 {
			_ = json.Unmarshal(o, &st.Output)
		}
		return st, err
	})
	if err != nil {
		return nil, errorf("steps of %s: %w", run, err)
	}
	return out, nil
}

const approvalCols = `token_hash, run_id::text, workflow_id, step_index, step_id, approver_spec, message, status,
 coalesce(approver, ''), coalesce(note, ''), expires_at, created_at, coalesce(decided_at, 0)`

func scanApproval(r pgx.Row) (*workflow.Approval, error) {
	a := &workflow.Approval{}
	err := r.Scan(&a.TokenHash, &a.RunID, &a.WorkflowID, &a.StepIndex, &a.StepID, &a.ApproverSpec, &a.Message, &a.Status,
		&a.Approver, &a.Note, &a.ExpiresAt, &a.CreatedAt, &a.DecidedAt)
	return a, err
}

// WorkflowApprovalsInsert stores an approval gate.
func (t *Tx) WorkflowApprovalsInsert(ctx context.Context, a *workflow.Approval) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO workflow_approvals (community_id, token_hash, run_id, workflow_id, step_index, step_id,
  approver_spec, message, status, expires_at, created_at) VALUES ($1, $2, $3::uuid, $4, $5, $6, $7, $8, 'pending', $9, $10)`,
		t.community, a.TokenHash, a.RunID, a.WorkflowID, a.StepIndex, a.StepID, a.ApproverSpec, a.Message, a.ExpiresAt, a.CreatedAt)
	if err != nil {
		return errorf("insert approval of %s: %w", a.RunID, err)
	}
	return nil
}

// WorkflowApprovalsGet reads the gate of token hash h, locked for this
// transaction; records.ErrNotFound when there is none.
func (t *Tx) WorkflowApprovalsGet(ctx context.Context, h []byte) (*workflow.Approval, error) {
	a, err := scanApproval(t.tx.QueryRow(ctx, `SELECT `+approvalCols+` FROM workflow_approvals
WHERE community_id = $1 AND token_hash = $2 FOR UPDATE`, t.community, h))
	if err != nil {
		return nil, errorf("approval: %w", err)
	}
	return a, nil
}

// WorkflowApprovalsTake moves a pending gate to status, by approver with
// note, at now; false when it was no longer pending.
func (t *Tx) WorkflowApprovalsTake(ctx context.Context, h []byte, status, approver, note string, now int64) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE workflow_approvals SET status = $3, approver = nullif($4, ''), note = nullif($5, ''), decided_at = $6
WHERE community_id = $1 AND token_hash = $2 AND status = 'pending'`, t.community, h, status, approver, note, now)
	if err != nil {
		return false, errorf("take approval: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// WorkflowApprovalsList reads run's gates, oldest first.
func (s *Store) WorkflowApprovalsList(ctx context.Context, community, run string) ([]*workflow.Approval, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+approvalCols+` FROM workflow_approvals
WHERE community_id = $1 AND run_id::text = $2 ORDER BY created_at, step_index`, community, run)
	if err != nil {
		return nil, errorf("approvals of %s: %w", run, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*workflow.Approval, error) { return scanApproval(r) })
	if err != nil {
		return nil, errorf("approvals of %s: %w", run, err)
	}
	return out, nil
}

// authoritySQL reads SEC-006's facts of $2 in channel $3 of community $1
// in one statement: the active role, banned now, the channel gone.
var authoritySQL = `SELECT
  coalesce((SELECT role FROM channel_members WHERE community_id = $1 AND channel_id = $3 AND pubkey = $2 AND ` + activeMember + `), ''),
  ` + ruleNow("$2", bannedNow) + `,
  NOT EXISTS (SELECT 1 FROM channels c WHERE c.community_id = $1 AND c.id = $3 AND c.` + notDeleted + `)`

// ChannelMembersGetAuthority reads what SEC-006 asks of pubkey, a
// workflow's owner, in channel now (workflow.CheckOwner).
func (s *Store) ChannelMembersGetAuthority(ctx context.Context, community, channel, pubkey string) (workflow.Authority, error) {
	var a workflow.Authority
	err := s.pool.QueryRow(ctx, authoritySQL, community, pubkey, channel).Scan(&a.Role, &a.Banned, &a.Gone)
	if err != nil {
		return a, errorf("authority of %s in %s: %w", pubkey, channel, err)
	}
	a.Elevated = a.Role == "owner" || a.Role == "admin"
	return a, nil
}

// ChannelMembersGetAuthority is Store.ChannelMembersGetAuthority in this
// transaction.
func (t *Tx) ChannelMembersGetAuthority(ctx context.Context, channel, pubkey string) (workflow.Authority, error) {
	var a workflow.Authority
	err := t.tx.QueryRow(ctx, authoritySQL, t.community, pubkey, channel).Scan(&a.Role, &a.Banned, &a.Gone)
	if err != nil {
		return a, errorf("authority of %s in %s: %w", pubkey, channel, err)
	}
	a.Elevated = a.Role == "owner" || a.Role == "admin"
	return a, nil
}

// WorkflowStepsList is Store.WorkflowStepsList in this transaction.
func (t *Tx) WorkflowStepsList(ctx context.Context, run string) ([]workflow.StepRow, error) {
	rows, err := t.tx.Query(ctx, `SELECT step_index, step_id, status, output, coalesce(error, ''), coalesce(effect_id, ''),
  started_at, coalesce(completed_at, 0) FROM workflow_steps WHERE community_id = $1 AND run_id::text = $2 ORDER BY step_index`, t.community, run)
	if err != nil {
		return nil, errorf("steps of %s: %w", run, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (workflow.StepRow, error) {
		var st workflow.StepRow
		var o []byte
		err := r.Scan(&st.Index, &st.StepID, &st.Status, &o, &st.Error, &st.EffectID, &st.StartedAt, &st.CompletedAt)
		if err == nil && len(o) > 0 {
			_ = json.Unmarshal(o, &st.Output)
		}
		return st, err
	})
	if err != nil {
		return nil, errorf("steps of %s: %w", run, err)
	}
	return out, nil
}

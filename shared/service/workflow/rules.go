package workflow

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	wf "github.com/buzzrelay/relay/shared/domain/workflow"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// The write path's rules for Buzz's workflow kinds, run by ingest in the
// event's transaction (ingest.WorkflowRules). A refusal rolls everything
// back; a note is the OK's message.

// Define is the rule of a 30620: Buzz's checks in Buzz's order (the h and
// d tags, the author a member of the channel, the workflow the author's
// and in the same channel, the definition's schema, SEC-006 for a
// definition that calls webhooks), then store (the event, by the
// addressable rule), then the workflow's row. A new webhook workflow's
// secret is minted here and answered once, in the note
// (response:{"workflow_id","webhook_secret"}); updates keep it.
func (s *Service) Define(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64, storeEvent func() error) (string, error) {
	h, ok := filter.TagValue(ev.Tags, "h")
	if !ok || h == "" {
		return "", reject.Invalidf("missing h tag (channel_id)")
	}
	d, ok := filter.TagValue(ev.Tags, "d")
	if !ok {
		return "", reject.Invalidf("missing d tag (workflow ID)")
	}
	wid, err := uuid.Parse(d)
	if err != nil || len(d) != 36 {
		return "", reject.Invalidf("workflow ID in d tag must be a valid UUID")
	}
	id := wid.String()
	auth, err := tx.ChannelMembersGetAuthority(ctx, h, ev.PubKey)
	if err != nil {
		return "", err
	}
	if auth.Gone || auth.Role == "" {
		return "", reject.Restrictedf("not a member of this channel")
	}
	prev, err := tx.WorkflowsGet(ctx, id)
	if err != nil && !errors.Is(err, records.ErrNotFound) {
		return "", err
	}
	if err == nil {
		if prev.Owner != ev.PubKey {
			return "", reject.Restrictedf("cannot update a workflow owned by another user")
		}
		if prev.Channel != h {
			return "", reject.Restrictedf("cannot change the channel of an existing workflow")
		}
	} else {
		prev = nil
	}
	def, err := wf.Parse(ev.Content)
	if err != nil {
		return "", reject.Invalidf("workflow YAML parse error: %v", err)
	}
	if def.RequiresElevatedAuthority() && !auth.Elevated {
		return "", reject.Restrictedf("call_webhook requires the channel owner or admin role")
	}
	if err := storeEvent(); err != nil {
		return "", err
	}
	row := &wf.Workflow{
		ID: id, Channel: h, Owner: ev.PubKey, Name: workflowName(ev, def), EventID: ev.ID,
		Definition: def.Canonical(), TriggerOn: def.Trigger.On, Enabled: def.Enabled,
		Elevated: def.RequiresElevatedAuthority(), CreatedAt: now, UpdatedAt: now,
	}
	if def.Trigger.On == wf.OnSchedule {
		if row.Schedule, err = def.Trigger.ScheduleExpression(); err != nil {
			return "", reject.Invalidf("workflow YAML parse error: invalid definition: %v", err)
		}
	}
	var secret string
	if def.Trigger.On == wf.OnWebhook && (prev == nil || len(prev.SecretHash) == 0) {
		secret = wf.NewWebhookSecret()
		row.SecretHash = wf.Hash(secret)
	}
	if err := tx.WorkflowsUpsert(ctx, row); err != nil {
		return "", err
	}
	s.markActive(tx.Community())
	resp := map[string]string{"workflow_id": id}
	if secret != "" {
		resp["webhook_secret"] = secret
	}
	b, _ := json.Marshal(resp)
	return "response:" + string(b), nil
}

// workflowName is the name tag, else the definition's name (Buzz takes
// the name tag or the d tag; the definition's name is what the app shows).
func workflowName(ev *nostr.Event, def *wf.Def) string {
	if n, ok := filter.TagValue(ev.Tags, "name"); ok && n != "" {
		return n
	}
	return def.Name
}

// Deleted is the effect of a kind 5 naming a 30620's address: the
// author's workflow of that id is deleted (its schedule goes after the
// commit, runner.go).
func (s *Service) Deleted(ctx context.Context, tx *store.Tx, pubkey, d string, now int64) error {
	wid, err := uuid.Parse(d)
	if err != nil {
		return nil // no workflow has that id
	}
	_, err = tx.WorkflowsDelete(ctx, pubkey, wid.String(), now)
	return err
}

// Trigger is the rule of a 46020: the workflow named by its d (or e) tag
// exists, the sender is a member of its channel, and its owner may run it
// now (SEC-006); a run is created (one per 46020) and the event is filed
// in the workflow's channel. The note is response:{"run_id"}.
func (s *Service) Trigger(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64) (string, string, error) {
	ref, ok := filter.TagValue(ev.Tags, "d")
	if !ok {
		ref, ok = filter.TagValue(ev.Tags, "e")
	}
	if !ok {
		return "", "", reject.Invalidf("missing workflow reference (d or e tag)")
	}
	wid, err := uuid.Parse(ref)
	if err != nil {
		return "", "", reject.Invalidf("bad workflow_id format")
	}
	w, err := tx.WorkflowsGet(ctx, wid.String())
	if errors.Is(err, records.ErrNotFound) || (err == nil && w.Deleted) {
		return "", "", reject.Invalidf("workflow not found")
	}
	if err != nil {
		return "", "", err
	}
	caller, err := tx.ChannelMembersGetAuthority(ctx, w.Channel, ev.PubKey)
	if err != nil {
		return "", "", err
	}
	if caller.Gone || caller.Role == "" {
		// Another channel's workflow looks like no workflow at all.
		return "", "", reject.Invalidf("workflow not found")
	}
	if err := s.runnable(ctx, tx, w); err != nil {
		return "", "", err
	}
	trig := wf.TriggerContext{ChannelID: w.Channel, Author: ev.PubKey, Timestamp: itoa(int64(ev.CreatedAt)), WebhookFields: map[string]string{}}
	if ev.Content != "" {
		var m map[string]any
		if json.Unmarshal([]byte(ev.Content), &m) == nil {
			for k, v := range m {
				if str, ok := v.(string); ok {
					trig.WebhookFields[k] = str
				} else {
					b, _ := json.Marshal(v)
					trig.WebhookFields[k] = string(b)
				}
			}
		}
	}
	run := &wf.Run{ID: uuid.NewString(), WorkflowID: w.ID, TriggerKey: ev.ID, TriggerKind: wf.ByManual, Trigger: trig,
		Definition: w.Definition, CreatedAt: now}
	runID, _, err := tx.WorkflowRunsInsert(ctx, run)
	if err != nil {
		return "", "", err
	}
	b, _ := json.Marshal(map[string]string{"run_id": runID})
	return "response:" + string(b), w.Channel, nil
}

// runnable refuses a run of w its owner may not start now (SEC-006), or
// of a disabled workflow, with the refusal the sender sees.
func (s *Service) runnable(ctx context.Context, tx *store.Tx, w *wf.Workflow) error {
	if !w.Enabled {
		return reject.Invalidf("workflow is disabled (enabled: false)")
	}
	owner, err := tx.ChannelMembersGetAuthority(ctx, w.Channel, w.Owner)
	if err != nil {
		return err
	}
	if err := wf.CheckOwner(owner, w.Elevated); err != nil {
		return reject.Restrictedf("%v", err)
	}
	return nil
}

// Decide is the rule of a 46030 (grant) or 46031 (deny): its d tag (or e
// tag) is an approval's SHA-256; the approval is pending and not expired;
// the sender is a member of the workflow's channel and the approver it
// names; the approval is decided and its run readied to go on from the
// next step (the runner advances it after the commit). The event is filed
// in the workflow's channel; the note is response:{"status","run_id"}.
func (s *Service) Decide(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64) (string, string, error) {
	ref, ok := filter.TagValue(ev.Tags, "d")
	if !ok {
		ref, ok = filter.TagValue(ev.Tags, "e")
	}
	if !ok {
		return "", "", reject.Invalidf("missing approval reference (d or e tag)")
	}
	h, err := hex.DecodeString(strings.ToLower(ref))
	if err != nil || len(h) != 32 {
		return "", "", reject.Invalidf("bad approval token hash hex")
	}
	a, err := tx.WorkflowApprovalsGet(ctx, h)
	if errors.Is(err, records.ErrNotFound) {
		return "", "", reject.Invalidf("approval not found")
	}
	if err != nil {
		return "", "", err
	}
	w, err := tx.WorkflowsGet(ctx, a.WorkflowID)
	if err != nil {
		return "", "", err
	}
	caller, err := tx.ChannelMembersGetAuthority(ctx, w.Channel, ev.PubKey)
	if err != nil {
		return "", "", err
	}
	if caller.Gone || caller.Role == "" {
		return "", "", reject.Invalidf("approval not found")
	}
	if a.Status != wf.ApprovalPending {
		return "", "", reject.Invalidf("approval already %s", a.Status)
	}
	if now > a.ExpiresAt {
		return "", "", reject.Invalidf("approval token has expired")
	}
	if err := wf.CheckApprover(a.ApproverSpec, ev.PubKey); err != nil {
		return "", "", reject.Restrictedf("%v", err)
	}
	status := wf.ApprovalGranted
	if ev.Kind == kinds.ApprovalDeny {
		status = wf.ApprovalDenied
	}
	took, err := tx.WorkflowApprovalsTake(ctx, h, status, ev.PubKey, ev.Content, now)
	if err != nil {
		return "", "", err
	}
	if !took {
		return "", "", reject.Invalidf("approval already acted on (race)")
	}
	// The gate's step completes with the decision; the run goes on from
	// the next step (a denied approval too: later steps read
	// steps_ID_output_approved, as in Buzz).
	out := map[string]any{"approved": status == wf.ApprovalGranted, "approver": ev.PubKey}
	if ev.Content != "" {
		out["note"] = ev.Content
	}
	if err := tx.WorkflowStepsPut(ctx, a.RunID, &wf.StepRow{Index: a.StepIndex, StepID: a.StepID, Status: wf.StepCompleted,
		Output: out, StartedAt: a.CreatedAt, CompletedAt: now}); err != nil {
		return "", "", err
	}
	run, ok, err := tx.WorkflowRunsLock(ctx, a.RunID)
	if err != nil {
		return "", "", err
	}
	if ok && run.Status == wf.RunWaitingApproval && run.CurrentStep == a.StepIndex {
		run.Status, run.CurrentStep, run.WakeAt = wf.RunPending, a.StepIndex+1, 0
		if err := tx.WorkflowRunsUpdate(ctx, run); err != nil {
			return "", "", err
		}
	}
	b, _ := json.Marshal(map[string]string{"status": status, "run_id": a.RunID})
	return "response:" + string(b), w.Channel, nil
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

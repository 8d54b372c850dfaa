package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
	wf "github.com/buzzrelay/relay/shared/domain/workflow"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// ErrBadBatch is a payload that is not the runner's: not worth a retry.
var ErrBadBatch = errors.New("workflow: not a runner payload")

// MaxResponseBytes bounds what call_webhook reads of an answer (Buzz's
// WEBHOOK_MAX_RESPONSE_BYTES).
const MaxResponseBytes = 1 << 20

// Handle is functions/workflow-runner's handler: a commit's batch (message
// triggers, manual runs, decided approvals, schedules to keep), a run to
// advance (a webhook's, a wake), or a schedule's fire. An error makes
// Lambda retry the invoke; every step it already took stays taken.
func (s *Service) Handle(ctx context.Context, payload json.RawMessage) error {
	var b Batch
	if err := json.Unmarshal(payload, &b); err != nil || b.Community == "" || len(b.IDs) > MaxBatchIDs {
		s.log().WarnContext(ctx, "workflow: not a runner payload", "payload", truncate(string(payload), 200))
		return nil // a retry would read it the same
	}
	switch {
	case b.Run != "":
		return s.Advance(ctx, b.Community, b.Run)
	case b.Workflow != "":
		return s.Fire(ctx, b.Community, b.Workflow, b.fireMinute())
	}
	return s.committed(ctx, b.Community, b.IDs)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// committed acts on one commit's events.
func (s *Service) committed(ctx context.Context, community string, ids []string) error {
	stored, err := s.Store.EventsListForPush(ctx, community, ids)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		raw, ok := stored[id]
		if !ok {
			continue // deleted since, or never stored
		}
		ev := &nostr.Event{}
		if err := json.Unmarshal([]byte(raw.Raw), ev); err != nil {
			continue
		}
		if err := s.act(ctx, community, raw.Channel, ev); err != nil {
			errs = append(errs, fmt.Errorf("event %s: %w", ev.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Service) act(ctx context.Context, community, channel string, ev *nostr.Event) error {
	switch {
	case ev.Kind == kinds.WorkflowDef:
		d, _ := filter.TagValue(ev.Tags, "d")
		return s.syncSchedule(ctx, community, d)
	case ev.Kind == kinds.Deletion:
		for _, t := range ev.Tags {
			if len(t) >= 2 && t[0] == "a" && strings.HasPrefix(t[1], "30620:") {
				if parts := strings.SplitN(t[1], ":", 3); len(parts) == 3 {
					return s.syncSchedule(ctx, community, parts[2])
				}
			}
		}
		return nil
	case ev.Kind == kinds.WorkflowTrigger:
		ref, ok := filter.TagValue(ev.Tags, "d")
		if !ok {
			ref, _ = filter.TagValue(ev.Tags, "e")
		}
		wid, err := uuid.Parse(ref)
		if err != nil {
			return nil
		}
		run, err := s.Store.WorkflowRunsGetByTrigger(ctx, community, wid.String(), ev.ID)
		if errors.Is(err, records.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return s.Advance(ctx, community, run.ID)
	case ev.Kind == kinds.ApprovalGrant || ev.Kind == kinds.ApprovalDeny:
		return s.resumeApproval(ctx, community, ev)
	case triggering(ev) && channel != "":
		return s.match(ctx, community, channel, ev)
	}
	return nil
}

func (s *Service) resumeApproval(ctx context.Context, community string, ev *nostr.Event) error {
	ref, ok := filter.TagValue(ev.Tags, "d")
	if !ok {
		ref, _ = filter.TagValue(ev.Tags, "e")
	}
	h, err := hexBytes(ref)
	if err != nil {
		return nil
	}
	var run string
	err = s.Store.Tx(ctx, community, func(tx *store.Tx) error {
		a, err := tx.WorkflowApprovalsGet(ctx, h)
		if err != nil {
			return err
		}
		run = a.RunID
		return nil
	})
	if errors.Is(err, records.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.Advance(ctx, community, run)
}

// ons are the triggers an event of kind may fire.
func ons(kind int) []string {
	switch kind {
	case kinds.Reaction:
		return []string{wf.OnReactionAdded}
	case kinds.MessageDiff:
		return []string{wf.OnDiffPosted}
	}
	return []string{wf.OnMessagePosted}
}

// match starts a run of every workflow of channel that ev triggers (its
// filter true, its emoji the reaction's) and whose owner may run it now.
func (s *Service) match(ctx context.Context, community, channel string, ev *nostr.Event) error {
	ws, err := s.Store.WorkflowsListChannel(ctx, community, channel, ons(ev.Kind))
	if err != nil || len(ws) == 0 {
		return err
	}
	trig := triggerOf(ev, channel)
	var errs []error
	for _, w := range ws {
		def, err := wf.Parse(string(w.Definition))
		if err != nil {
			continue
		}
		if def.Trigger.On == wf.OnReactionAdded && def.Trigger.Emoji != nil && strings.Trim(*def.Trigger.Emoji, ":") != strings.Trim(trig.Emoji, ":") {
			continue
		}
		if def.Trigger.Filter != nil {
			ok, err := wf.Eval(*def.Trigger.Filter, wf.Vars(&trig, nil))
			if err != nil {
				s.log().WarnContext(ctx, "workflow: trigger filter", "workflow", w.ID, "err", err)
				continue
			}
			if !ok {
				continue
			}
		}
		if err := s.start(ctx, community, w, trig, ev.ID, wf.ByMessage); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// triggerOf is the trigger context of a channel event (Buzz's
// TriggerContext): its text, author, time and ids; a reaction's emoji and
// the message it reacts to.
func triggerOf(ev *nostr.Event, channel string) wf.TriggerContext {
	t := wf.TriggerContext{Text: ev.Content, Author: ev.PubKey, ChannelID: channel, Timestamp: strconv.FormatInt(int64(ev.CreatedAt), 10),
		MessageID: ev.ID, RootMessageID: ev.ID, WebhookFields: map[string]string{}}
	var es []string
	for _, tag := range ev.Tags {
		if len(tag) < 2 || tag[0] != "e" {
			continue
		}
		es = append(es, tag[1])
		if len(tag) >= 4 && tag[3] == "root" {
			t.RootMessageID = tag[1]
		}
		if len(tag) >= 4 && tag[3] == "reply" {
			t.ParentMessageID = tag[1]
		}
	}
	if ev.Kind == kinds.Reaction {
		t.Emoji, t.Text = ev.Content, ""
		if len(es) > 0 {
			t.MessageID, t.RootMessageID = es[len(es)-1], es[len(es)-1]
		}
	} else if t.ParentMessageID == "" && t.RootMessageID != ev.ID {
		t.ParentMessageID = t.RootMessageID
	}
	return t
}

// start creates the run of w for trigger key (once however often the
// trigger is delivered) after SEC-006, and advances it.
func (s *Service) start(ctx context.Context, community string, w *wf.Workflow, trig wf.TriggerContext, key, by string) error {
	auth, err := s.Store.ChannelMembersGetAuthority(ctx, community, w.Channel, w.Owner)
	if err != nil {
		return err
	}
	if err := wf.CheckOwner(auth, w.Elevated); err != nil {
		s.log().InfoContext(ctx, "workflow: not run", "workflow", w.ID, "reason", err.Error())
		return nil
	}
	var id string
	var created bool
	err = s.Store.Tx(ctx, community, func(tx *store.Tx) error {
		var err error
		id, created, err = tx.WorkflowRunsInsert(ctx, &wf.Run{ID: uuid.NewString(), WorkflowID: w.ID, TriggerKey: key,
			TriggerKind: by, Trigger: trig, Definition: w.Definition, CreatedAt: s.clock().Unix()})
		return err
	})
	if err != nil {
		return err
	}
	_ = created // a retried batch advances the run it started before
	return s.Advance(ctx, community, id)
}

// Fire is a schedule's fire: a run of the workflow for that minute, if it
// is still a live schedule workflow whose owner may run it (else its
// schedule goes).
func (s *Service) Fire(ctx context.Context, community, workflowID string, fire int64) error {
	w, err := s.Store.WorkflowsGet(ctx, community, workflowID)
	if errors.Is(err, records.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if w.Deleted || !w.Enabled || w.Schedule == "" {
		return s.syncSchedule(ctx, community, workflowID)
	}
	if fire == 0 {
		fire = s.clock().Unix()
	}
	fire -= fire % 60
	trig := wf.TriggerContext{ChannelID: w.Channel, Timestamp: strconv.FormatInt(fire, 10), WebhookFields: map[string]string{}}
	return s.start(ctx, community, w, trig, "schedule:"+strconv.FormatInt(fire, 10), wf.BySchedule)
}

// syncSchedule makes the workflow's schedule what its row says: one
// schedule while it is a live, enabled schedule workflow, none otherwise.
func (s *Service) syncSchedule(ctx context.Context, community, id string) error {
	if s.Scheduler == nil || id == "" {
		return nil
	}
	wid, err := uuid.Parse(id)
	if err != nil {
		return nil
	}
	w, err := s.Store.WorkflowsGet(ctx, community, wid.String())
	if errors.Is(err, records.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if w.Deleted || !w.Enabled || w.Schedule == "" {
		return s.Scheduler.Delete(ctx, community, w.ID)
	}
	return s.Scheduler.Put(ctx, community, w.ID, w.Schedule)
}

// Advance takes run's steps until it waits, ends, or another instance
// holds it.
func (s *Service) Advance(ctx context.Context, community, run string) error {
	for range MaxStepsPerInvocation {
		more, err := s.step(ctx, community, run)
		if err != nil || !more {
			return err
		}
	}
	s.invoke(ctx, Batch{Community: community, Run: run}) // a long run goes on in the next invocation
	return nil
}

// webhookCall is a call_webhook step to make once its started row
// committed.
type webhookCall struct {
	run, stepID      string
	index            int
	url, method, key string
	headers          map[string]string
	body             *string
	timeout          time.Duration
}

// step takes the run's next step in one transaction holding its row:
// more is true when another step may follow at once.
func (s *Service) step(ctx context.Context, community, runID string) (bool, error) {
	var (
		ext    *webhookCall
		posted []*nostr.Event
		wake   time.Time
		more   bool
	)
	sg, keyErr := signer.For(ctx, s.Signer, community)
	err := s.Store.Tx(ctx, community, func(tx *store.Tx) error {
		ext, posted, wake, more = nil, nil, time.Time{}, false
		run, ok, err := tx.WorkflowRunsLock(ctx, runID)
		if err != nil || !ok {
			return err
		}
		now := s.clock().Unix()
		switch run.Status {
		case wf.RunCompleted, wf.RunFailed, wf.RunCancelled:
			return nil
		case wf.RunWaitingApproval:
			if run.WakeAt == 0 || now < run.WakeAt {
				return nil
			}
			return s.expireApproval(ctx, tx, run, now)
		case wf.RunWaiting:
			if now < run.WakeAt {
				wake = time.Unix(run.WakeAt, 0)
				return nil
			}
			st, found, err := tx.WorkflowStepsGet(ctx, run.ID, run.CurrentStep)
			if err != nil {
				return err
			}
			if found {
				st.Status, st.CompletedAt = wf.StepCompleted, now
				if err := tx.WorkflowStepsPut(ctx, run.ID, st); err != nil {
					return err
				}
			}
			run.Status, run.WakeAt = wf.RunRunning, 0
			run.CurrentStep++
		}
		w, err := tx.WorkflowsGet(ctx, run.WorkflowID)
		if err != nil {
			return err
		}
		def, err := wf.Parse(string(run.Definition))
		if err != nil {
			return s.fail(ctx, tx, run, -1, "", err, now)
		}
		if w.Deleted {
			run.Status, run.ErrorCode, run.ErrorMessage, run.CompletedAt = wf.RunCancelled, "workflow_deleted", "the workflow was deleted", now
			return tx.WorkflowRunsUpdate(ctx, run)
		}
		// SEC-006 before every step: the owner's authority now.
		auth, err := tx.ChannelMembersGetAuthority(ctx, w.Channel, w.Owner)
		if err != nil {
			return err
		}
		if err := wf.CheckOwner(auth, def.RequiresElevatedAuthority()); err != nil {
			return s.fail(ctx, tx, run, -1, "", err, now)
		}
		if run.Status == wf.RunPending {
			run.Status = wf.RunRunning
			if run.StartedAt == 0 {
				run.StartedAt = now
			}
		}
		if run.CurrentStep >= len(def.Steps) {
			run.Status, run.CompletedAt = wf.RunCompleted, now
			return tx.WorkflowRunsUpdate(ctx, run)
		}
		if def.RequiresDurableScheduler() {
			return s.fail(ctx, tx, run, -1, "", &wf.NotImplemented{Action: "durable DAG scheduler (depends_on, agent and artifact actions)"}, now)
		}
		idx := run.CurrentStep
		step := def.Steps[idx]
		prev, found, err := tx.WorkflowStepsGet(ctx, run.ID, idx)
		if err != nil {
			return err
		}
		rows, err := tx.WorkflowStepsList(ctx, run.ID)
		if err != nil {
			return err
		}
		outputs := wf.Outputs{}
		for _, r := range rows {
			if r.Status == wf.StepCompleted && r.Output != nil {
				outputs[r.StepID] = r.Output
			}
		}
		if found {
			switch prev.Status {
			case wf.StepStarted: // a call cut short: made again with its key
				a, err := resolve(step.Action, &run.Trigger, outputs)
				if err != nil {
					return s.fail(ctx, tx, run, idx, step.ID, err, now)
				}
				ext = s.webhookCall(run.ID, idx, step, a)
				return tx.WorkflowRunsUpdate(ctx, run)
			case wf.StepCompleted, wf.StepSkipped:
				run.CurrentStep++
				more = true
				return tx.WorkflowRunsUpdate(ctx, run)
			}
		}
		if step.If != nil {
			ok, err := wf.Eval(*step.If, wf.Vars(&run.Trigger, outputs))
			if err != nil {
				return s.fail(ctx, tx, run, idx, step.ID, err, now)
			}
			if !ok {
				if err := tx.WorkflowStepsPut(ctx, run.ID, &wf.StepRow{Index: idx, StepID: step.ID, Status: wf.StepSkipped, StartedAt: now, CompletedAt: now}); err != nil {
					return err
				}
				run.CurrentStep++
				more = true
				return tx.WorkflowRunsUpdate(ctx, run)
			}
		}
		a, err := resolve(step.Action, &run.Trigger, outputs)
		if err != nil {
			return s.fail(ctx, tx, run, idx, step.ID, err, now)
		}
		row := &wf.StepRow{Index: idx, StepID: step.ID, Status: wf.StepCompleted, StartedAt: now, CompletedAt: now}
		switch a.Kind {
		case wf.ActSendMessage, wf.ActAddReaction, wf.ActRequestApproval:
			if keyErr != nil {
				return fmt.Errorf("workflow: relay key: %w", keyErr)
			}
		}
		switch a.Kind {
		case wf.ActSendMessage:
			ev, err := s.message(ctx, tx, sg, w, run, a, now)
			if err != nil {
				return s.failOr(ctx, tx, run, idx, step.ID, err, now)
			}
			row.Output, row.EffectID = map[string]any{"sent": true, "event_id": ev.ID}, ev.ID
			posted = append(posted, ev)
		case wf.ActAddReaction:
			ev, err := s.reaction(ctx, tx, sg, w, run, a, now)
			if err != nil {
				return s.failOr(ctx, tx, run, idx, step.ID, err, now)
			}
			row.Output, row.EffectID = map[string]any{"added": true, "event_id": ev.ID}, ev.ID
			posted = append(posted, ev)
		case wf.ActDelay:
			secs, err := wf.DurationSeconds(a.Duration)
			if err != nil {
				return s.fail(ctx, tx, run, idx, step.ID, err, now)
			}
			row.Status, row.CompletedAt, row.Output = wf.StepWaiting, 0, map[string]any{"slept_secs": secs}
			run.Status, run.WakeAt = wf.RunWaiting, now+int64(secs)
			wake = time.Unix(run.WakeAt, 0)
		case wf.ActRequestApproval:
			ev, expires, err := s.approval(ctx, tx, sg, w, run, idx, step.ID, a, now)
			if err != nil {
				return s.failOr(ctx, tx, run, idx, step.ID, err, now)
			}
			row.Status, row.CompletedAt, row.EffectID = wf.StepWaiting, 0, ev.ID
			run.Status, run.WakeAt = wf.RunWaitingApproval, expires
			wake = time.Unix(expires, 0)
			posted = append(posted, ev)
		case wf.ActCallWebhook:
			row.Status, row.CompletedAt = wf.StepStarted, 0
			ext = s.webhookCall(run.ID, idx, step, a)
			row.EffectID = ext.key
		case wf.ActSendDM:
			return s.fail(ctx, tx, run, idx, step.ID, &wf.NotImplemented{Action: "SendDm"}, now)
		case wf.ActSetChannelTopic:
			return s.fail(ctx, tx, run, idx, step.ID, &wf.NotImplemented{Action: "SetChannelTopic"}, now)
		default:
			return s.fail(ctx, tx, run, idx, step.ID, &wf.NotImplemented{Action: a.Kind}, now)
		}
		if err := tx.WorkflowStepsPut(ctx, run.ID, row); err != nil {
			return err
		}
		if row.Status == wf.StepCompleted {
			run.CurrentStep++
			more = true
		}
		return tx.WorkflowRunsUpdate(ctx, run)
	})
	if err != nil {
		return false, err
	}
	if len(posted) > 0 && s.Live != nil {
		s.Live.Deliver(ctx, community, posted, nil)
	}
	if !wake.IsZero() && s.Waker != nil {
		if err := s.Waker.Wake(ctx, community, runID, wake); err != nil {
			return false, fmt.Errorf("workflow: wake run %s: %w", runID, err)
		}
	}
	if ext != nil {
		return true, s.finishCall(ctx, community, ext)
	}
	return more, nil
}

// sinkError marks an action's failure that fails the run (not the
// transaction).
type sinkError struct{ err error }

func (e *sinkError) Error() string { return e.err.Error() }

// failOr fails the run for an action's refusal, or returns a database
// error for the transaction to retry.
func (s *Service) failOr(ctx context.Context, tx *store.Tx, run *wf.Run, idx int, stepID string, err error, now int64) error {
	var se *sinkError
	if errors.As(err, &se) {
		return s.fail(ctx, tx, run, idx, stepID, se.err, now)
	}
	return err
}

// fail ends run as failed with err (Buzz's code and text), its step (idx
// >= 0) failed with it.
func (s *Service) fail(ctx context.Context, tx *store.Tx, run *wf.Run, idx int, stepID string, err error, now int64) error {
	if idx >= 0 {
		if e := tx.WorkflowStepsPut(ctx, run.ID, &wf.StepRow{Index: idx, StepID: stepID, Status: wf.StepFailed, Error: err.Error(), StartedAt: now, CompletedAt: now}); e != nil {
			return e
		}
	}
	run.Status, run.ErrorCode, run.ErrorMessage, run.CompletedAt, run.WakeAt = wf.RunFailed, wf.Code(err), err.Error(), now, 0
	return tx.WorkflowRunsUpdate(ctx, run)
}

// expireApproval ends a run whose approval was not decided in time.
func (s *Service) expireApproval(ctx context.Context, tx *store.Tx, run *wf.Run, now int64) error {
	as, err := s.Store.WorkflowApprovalsList(ctx, tx.Community(), run.ID)
	if err != nil {
		return err
	}
	for _, a := range as {
		if a.Status == wf.ApprovalPending {
			if _, err := tx.WorkflowApprovalsTake(ctx, a.TokenHash, wf.ApprovalExpired, "", "", now); err != nil {
				return err
			}
		}
	}
	return s.fail(ctx, tx, run, run.CurrentStep, stepIDOf(run), &wf.StepTimeout{Step: stepIDOf(run), Secs: 0}, now)
}

func stepIDOf(run *wf.Run) string {
	def, err := wf.Parse(string(run.Definition))
	if err != nil || run.CurrentStep >= len(def.Steps) {
		return ""
	}
	return def.Steps[run.CurrentStep].ID
}

// resolve is the step's action with its templates filled in.
func resolve(a wf.Action, c *wf.TriggerContext, out wf.Outputs) (wf.Action, error) {
	r := a
	var err error
	t := func(s string) string {
		if err != nil {
			return ""
		}
		var v string
		v, err = wf.Resolve(s, c, out)
		return v
	}
	tp := func(s *string) *string {
		if s == nil {
			return nil
		}
		v := t(*s)
		return &v
	}
	r.Text, r.Channel, r.To, r.Topic, r.Emoji = t(a.Text), tp(a.Channel), t(a.To), t(a.Topic), t(a.Emoji)
	r.URL, r.Body, r.From, r.Message = t(a.URL), tp(a.Body), t(a.From), t(a.Message)
	if a.Headers != nil {
		r.Headers = map[string]string{}
		for k, v := range a.Headers {
			r.Headers[k] = t(v)
		}
	}
	return r, err
}

// tags are a workflow event's own tags: the channel, its owner
// (attribution, as Buzz's sink p-tags the owner), the run and the
// definition that made it (Buzz's workflow-run and workflow-definition).
func tags(w *wf.Workflow, run *wf.Run) nostr.Tags {
	return nostr.Tags{{"h", w.Channel}, {"p", w.Owner}, {"workflow-run", run.ID}, {"workflow-definition", w.EventID}}
}

// message signs and stores a send_message's message in the workflow's
// channel (an override must name that channel, as in Buzz).
func (s *Service) message(ctx context.Context, tx *store.Tx, sg signer.Signer, w *wf.Workflow, run *wf.Run, a wf.Action, now int64) (*nostr.Event, error) {
	if a.Channel != nil && strings.TrimSpace(*a.Channel) != "" {
		ch := strings.TrimSpace(*a.Channel)
		if _, err := uuid.Parse(ch); err != nil {
			return nil, &sinkError{defErr("SendMessage: invalid channel override UUID: %v", err)}
		}
		if !strings.EqualFold(ch, w.Channel) {
			return nil, &sinkError{defErr("SendMessage: channel override must match the workflow channel (%s)", w.Channel)}
		}
	}
	if strings.TrimSpace(a.Text) == "" {
		return nil, &sinkError{&wf.WebhookError{Msg: "empty message content"}}
	}
	tg := tags(w, run)
	meta := records.EventMeta{ChannelID: w.Channel, TopLevel: true, Search: true}
	if a.ReplyInThread && run.Trigger.MessageID != "" {
		root := run.Trigger.RootMessageID
		if root == "" {
			root = run.Trigger.MessageID
		}
		tg = append(tg, nostr.Tag{"e", root, "", "root"})
		if run.Trigger.MessageID != root {
			tg = append(tg, nostr.Tag{"e", run.Trigger.MessageID, "", "reply"})
		}
		meta.TopLevel = false
	}
	return s.signStore(ctx, tx, sg, kinds.Chat, now, tg, a.Text, meta)
}

// reaction signs and stores add_reaction's reaction to the triggering
// message.
func (s *Service) reaction(ctx context.Context, tx *store.Tx, sg signer.Signer, w *wf.Workflow, run *wf.Run, a wf.Action, now int64) (*nostr.Event, error) {
	if run.Trigger.MessageID == "" {
		return nil, &sinkError{defErr("AddReaction: no trigger.message_id available")}
	}
	tg := append(tags(w, run), nostr.Tag{"e", run.Trigger.MessageID})
	if run.Trigger.Author != "" {
		tg = append(tg, nostr.Tag{"p", run.Trigger.Author})
	}
	return s.signStore(ctx, tx, sg, kinds.Reaction, now, tg, a.Emoji, records.EventMeta{ChannelID: w.Channel})
}

// approval stores an approval gate and announces it (kind 46010): the
// token in its content, its SHA-256 in its d tag, p the approver (or the
// owner when anyone may decide).
func (s *Service) approval(ctx context.Context, tx *store.Tx, sg signer.Signer, w *wf.Workflow, run *wf.Run, idx int, stepID string, a wf.Action, now int64) (*nostr.Event, int64, error) {
	timeout := wf.DefaultApprovalTimeout
	if a.Timeout != nil {
		timeout = *a.Timeout
	}
	secs, err := wf.DurationSeconds(timeout)
	if err != nil {
		return nil, 0, &sinkError{err}
	}
	token := wf.NewApprovalToken()
	expires := now + int64(secs)
	spec := strings.TrimSpace(a.From)
	if err := tx.WorkflowApprovalsInsert(ctx, &wf.Approval{TokenHash: wf.Hash(token), RunID: run.ID, WorkflowID: w.ID, StepIndex: idx,
		StepID: stepID, ApproverSpec: spec, Message: a.Message, ExpiresAt: expires, CreatedAt: now}); err != nil {
		return nil, 0, err
	}
	notify := w.Owner
	if len(spec) == 64 {
		notify = strings.ToLower(spec)
	}
	content, _ := json.Marshal(map[string]any{"token": token, "message": a.Message, "workflow_id": w.ID, "run_id": run.ID,
		"step_id": stepID, "approver_spec": spec, "expires_at": expires})
	tg := nostr.Tags{{"d", wf.HashHex(token)}, {"h", w.Channel}, {"p", notify}, {"workflow-run", run.ID}, {"workflow-definition", w.EventID}}
	ev, err := s.signStore(ctx, tx, sg, kinds.WorkflowApprovalRequested, now, tg, string(content), records.EventMeta{ChannelID: w.Channel, TopLevel: true})
	return ev, expires, err
}

func (s *Service) signStore(ctx context.Context, tx *store.Tx, sg signer.Signer, kind int, now int64, tg nostr.Tags, content string, m records.EventMeta) (*nostr.Event, error) {
	ev := &nostr.Event{Kind: kind, CreatedAt: nostr.Timestamp(now), Tags: tg, Content: content}
	if err := sg.Sign(ctx, ev); err != nil {
		return nil, fmt.Errorf("workflow: sign kind %d: %w", kind, err)
	}
	if _, err := tx.EventsInsert(ctx, ev, m); err != nil {
		return nil, err
	}
	return ev, nil
}

func defErr(format string, a ...any) error { return &wf.Error{Msg: fmt.Sprintf(format, a...)} }

func (s *Service) webhookCall(run string, idx int, step wf.Step, a wf.Action) *webhookCall {
	method := "POST"
	if a.Method != nil && *a.Method != "" {
		method = strings.ToUpper(*a.Method)
	}
	timeout := wf.DefaultStepTimeout
	if step.TimeoutSecs != nil {
		timeout = time.Duration(*step.TimeoutSecs) * time.Second
	}
	return &webhookCall{run: run, stepID: step.ID, index: idx, url: a.URL, method: method, key: run + ":" + step.ID,
		headers: a.Headers, body: a.Body, timeout: timeout}
}

// finishCall makes a call_webhook's request (its started row committed:
// a run that finds it so makes it again, with the same Idempotency-Key)
// and completes or fails its step.
func (s *Service) finishCall(ctx context.Context, community string, c *webhookCall) error {
	out, callErr := s.call(ctx, c)
	return s.Store.Tx(ctx, community, func(tx *store.Tx) error {
		run, ok, err := tx.WorkflowRunsLock(ctx, c.run)
		if err != nil || !ok || run.CurrentStep != c.index || run.Status != wf.RunRunning {
			return err
		}
		now := s.clock().Unix()
		if callErr != nil {
			return s.fail(ctx, tx, run, c.index, c.stepID, callErr, now)
		}
		st := &wf.StepRow{Index: c.index, StepID: c.stepID, Status: wf.StepCompleted, Output: out, EffectID: c.key, StartedAt: now, CompletedAt: now}
		if prev, found, err := tx.WorkflowStepsGet(ctx, c.run, c.index); err == nil && found {
			st.StartedAt = prev.StartedAt
		}
		if err := tx.WorkflowStepsPut(ctx, c.run, st); err != nil {
			return err
		}
		run.CurrentStep++
		return tx.WorkflowRunsUpdate(ctx, run)
	})
}

// call is the HTTP request of a call_webhook, through the push sender's
// egress rules: the URL checked (push.CheckCallback: https, no private
// address literal), every connection's address checked (the client's
// dialer), no redirect followed, at most HostCap requests per host per
// minute, the answer read up to MaxResponseBytes.
func (s *Service) call(ctx context.Context, c *webhookCall) (map[string]any, error) {
	if err := push.CheckCallback(c.url, s.Policy); err != nil {
		msg := err.Error()
		if r, ok := reject.As(err); ok {
			msg = strings.TrimPrefix(r.Reason, "push callback: ")
		}
		return nil, &wf.WebhookError{Msg: msg}
	}
	u, _ := url.Parse(c.url)
	if !s.allowHost(u.Hostname()) {
		return nil, &wf.WebhookError{Msg: fmt.Sprintf("rate limited: more than %d calls to %s in a minute", s.hostCap(), u.Hostname())}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if c.body != nil {
		body = strings.NewReader(*c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return nil, &wf.WebhookError{Msg: err.Error()}
	}
	for _, k := range sortedKeys(c.headers) {
		req.Header.Set(k, c.headers[k])
	}
	req.Header.Set("Idempotency-Key", c.key)
	if req.Header.Get("Content-Type") == "" && c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, &wf.StepTimeout{Step: c.stepID, Secs: uint64(c.timeout / time.Second)}
		}
		return nil, &wf.WebhookError{Msg: redact(err.Error(), c.url)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, &wf.WebhookError{Msg: "reading response body: " + err.Error()}
	}
	if len(b) > MaxResponseBytes {
		return nil, &wf.WebhookError{Msg: fmt.Sprintf("response body exceeds %d byte limit", MaxResponseBytes)}
	}
	return map[string]any{"status": resp.StatusCode, "body": string(b)}, nil
}

// redact keeps a URL's query (which may carry a key) out of an error.
func redact(msg, raw string) string {
	if u, err := url.Parse(raw); err == nil && u.RawQuery != "" {
		return strings.ReplaceAll(msg, raw, u.Scheme+"://"+u.Host+u.Path)
	}
	return msg
}

func (s *Service) hostCap() int {
	if s.HostCap > 0 {
		return s.HostCap
	}
	return DefaultHostCap
}

// allowHost counts a call to host against its cap for the last minute.
func (s *Service) allowHost(host string) bool {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hosts == nil {
		s.hosts = map[string][]time.Time{}
	}
	kept := s.hosts[host][:0]
	for _, t := range s.hosts[host] {
		if now.Sub(t) < time.Minute {
			kept = append(kept, t)
		}
	}
	if len(kept) >= s.hostCap() {
		s.hosts[host] = kept
		return false
	}
	s.hosts[host] = append(kept, now)
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func hexBytes(s string) ([]byte, error) {
	if len(s) != 64 {
		return nil, errors.New("not 32 bytes of hex")
	}
	out := make([]byte, 32)
	for i := 0; i < 32; i++ {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil, err
		}
		out[i] = byte(v)
	}
	return out, nil
}

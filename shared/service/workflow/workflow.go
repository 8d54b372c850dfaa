// Package workflow runs Buzz's channel workflows (shared/domain/workflow)
// with nothing running between requests. Four doors, one Service:
//
//   - the write path's rules (rules.go), in the event's transaction: a
//     30620 validated and stored as its workflow's row (the webhook secret
//     minted once, answered in the OK as response:{…}); a kind 5 of its
//     address deletes it; a 46020 (manual run) creates a run; a
//     46030/46031 decides an approval gate and readies its run;
//   - Committed (the fan-out's call after each commit): the committed
//     events' ids go to the runner function in one asynchronous invoke
//     when the community has a workflow or one of them is a workflow
//     command, so no trigger delays the publisher;
//   - the runner (runner.go; functions/workflow-runner): it matches
//     message triggers, starts and advances runs step by step, each step a
//     row that is its idempotency key, waits as rows with a scheduled
//     wake, and schedule fires;
//   - the HTTP routes (http.go): POST /hooks/{id} with the webhook secret,
//     GET /workflows/{id}/runs and …/runs/{run}/approvals for the
//     channel's members.
//
// SEC-006 (workflow.CheckOwner) is asked at every door that starts or
// resumes a run, and before each step.
package workflow

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/guard"
)

// Invoker hands a payload to the runner function without waiting for it
// (Lambda Invoke with InvocationType Event; the emulator locally).
type Invoker interface {
	InvokeAsync(ctx context.Context, payload []byte) error
}

// Waker schedules a one-time invoke of the runner for a waiting run at
// its wake time (EventBridge Scheduler's at() schedule, in AWS and
// through the emulator's Scheduler API locally).
type Waker interface {
	Wake(ctx context.Context, community, run string, at time.Time) error
}

// Scheduler keeps one schedule per schedule-triggered workflow (an
// EventBridge Scheduler schedule whose target is the runner with the
// workflow in its input); Put creates or replaces it, Delete removes it.
type Scheduler interface {
	Put(ctx context.Context, community, workflowID, expression string) error
	Delete(ctx context.Context, community, workflowID string) error
}

// Deliverer delivers committed relay-signed events live
// (shared/service/fanout.Fanout.Deliver).
type Deliverer interface {
	Deliver(ctx context.Context, community string, events []*nostr.Event, at *store.Delivery)
}

// Service is the workflow engine over one store. Safe for concurrent use.
type Service struct {
	Store  *store.Store
	Signer signer.Signer // the relay keys: workflow messages are relay-signed
	Log    *slog.Logger
	// Runner is the runner function (nil: Committed hands nothing over).
	Runner Invoker
	// Waker, Scheduler: nil where the function schedules nothing.
	Waker     Waker
	Scheduler Scheduler
	// Live delivers what a run posts (nil: stored only).
	Live Deliverer
	// Client calls call_webhook's URLs: the push sender's egress rules
	// (no private address, no redirect, shared/service/push.NewClient).
	Client *http.Client
	// Policy is the egress policy call_webhook's URLs are checked by
	// (AllowPrivate only in local tests).
	Policy push.Policy
	// HostCap bounds call_webhook requests per host per minute, per
	// instance (0: DefaultHostCap).
	HostCap int
	// Guard is the door the routes' readers pass (guard.Read: the
	// community served, rate limits, auth, the NIP-43 gate).
	Guard *guard.Guard

	now func() time.Time

	mu     sync.Mutex
	active map[string]activeEntry
	hosts  map[string][]time.Time
}

type activeEntry struct {
	yes bool
	at  time.Time
}

// activeTTL is how long a community's "has a workflow" answer is kept per
// instance: a workflow saved elsewhere starts matching within it.
const activeTTL = 30 * time.Second

// DefaultHostCap is call_webhook's requests per host per minute.
const DefaultHostCap = 60

// MaxStepsPerInvocation bounds one invocation's work on a run.
const MaxStepsPerInvocation = 64

func (s *Service) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// WithClock returns a copy of s reading time from now (tests).
func (s *Service) WithClock(now func() time.Time) *Service {
	c := &Service{Store: s.Store, Signer: s.Signer, Log: s.Log, Runner: s.Runner, Waker: s.Waker, Scheduler: s.Scheduler,
		Live: s.Live, Client: s.Client, Policy: s.Policy, HostCap: s.HostCap, Guard: s.Guard, now: now}
	return c
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

// Batch is the runner's payload after a commit: the ids of the events
// one commit stored in Community.
type Batch struct {
	Community string   `json:"community"`
	IDs       []string `json:"ids,omitempty"`
	// Run, when set, is a run to advance (a webhook's, a wake).
	Run string `json:"run,omitempty"`
	// Workflow and Fire are a schedule's fire (the target input of its
	// EventBridge schedule; Fire the unix minute, 0: now).
	Workflow string `json:"workflow,omitempty"`
	Fire     int64  `json:"fire,omitempty"`
	// Scheduled is the time the schedule's fire was due (RFC 3339, the
	// Scheduler's <aws.scheduler.scheduled-time>), read when Fire is 0.
	Scheduled string `json:"scheduled,omitempty"`
}

// fireMinute is the unix time of b's fire: Fire, else Scheduled, else 0
// (now).
func (b Batch) fireMinute() int64 {
	if b.Fire != 0 {
		return b.Fire
	}
	if t, err := time.Parse(time.RFC3339, b.Scheduled); err == nil {
		return t.Unix()
	}
	return 0
}

// MaxBatchIDs bounds one batch.
const MaxBatchIDs = 64

// command reports whether kind is a workflow command the runner acts on
// after its commit.
func command(kind int) bool {
	switch kind {
	case kinds.WorkflowDef, kinds.WorkflowTrigger, kinds.ApprovalGrant, kinds.ApprovalDeny:
		return true
	}
	return false
}

// triggering reports whether ev may trigger a message workflow: a channel
// event of a trigger's kind that no workflow posted (a workflow never
// triggers itself), never one of the workflow-execution kinds.
func triggering(ev *nostr.Event) bool {
	switch ev.Kind {
	case kinds.Chat, kinds.StreamMessageV2, kinds.MessageDiff, kinds.Reaction:
	default:
		return false
	}
	return ev.Tags.GetFirst([]string{"workflow-run"}) == nil
}

// Committed is the fan-out's call after a commit: the ids go to the runner
// in one asynchronous invoke when one is a workflow command (a 30620, a
// kind 5 of one, a 46020, a 46030/46031), or may trigger a message
// workflow and the community has a live workflow (asked at most once per
// activeTTL). A failure is logged: the publisher's write stands.
func (s *Service) Committed(ctx context.Context, community string, events []*nostr.Event) {
	if s == nil || s.Runner == nil {
		return
	}
	var ids []string
	cmd := false
	for _, ev := range events {
		switch {
		case command(ev.Kind), ev.Kind == kinds.Deletion && deletesWorkflow(ev):
			cmd = true
			ids = append(ids, ev.ID)
		case triggering(ev):
			ids = append(ids, ev.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	if !cmd {
		active, err := s.isActive(ctx, community)
		if err != nil {
			s.log().ErrorContext(ctx, "workflow: workflows of the community", "community", community, "err", err)
			return
		}
		if !active {
			return
		}
	}
	if len(ids) > MaxBatchIDs {
		ids = ids[:MaxBatchIDs]
	}
	s.invoke(ctx, Batch{Community: community, IDs: ids})
}

func (s *Service) invoke(ctx context.Context, b Batch) {
	if s.Runner == nil {
		return
	}
	payload, err := json.Marshal(b)
	if err == nil {
		err = s.Runner.InvokeAsync(ctx, payload)
	}
	if err != nil {
		s.log().ErrorContext(ctx, "workflow: hand to the runner", "community", b.Community, "err", err)
	}
}

func deletesWorkflow(ev *nostr.Event) bool {
	for _, t := range ev.Tags {
		if len(t) >= 2 && t[0] == "a" && len(t[1]) > 6 && t[1][:6] == "30620:" {
			return true
		}
	}
	return false
}

func (s *Service) isActive(ctx context.Context, community string) (bool, error) {
	s.mu.Lock()
	e, ok := s.active[community]
	s.mu.Unlock()
	now := s.clock()
	if ok && now.Sub(e.at) < activeTTL {
		return e.yes, nil
	}
	yes, err := s.Store.WorkflowsExists(ctx, community)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	if s.active == nil {
		s.active = map[string]activeEntry{}
	}
	s.active[community] = activeEntry{yes, now}
	s.mu.Unlock()
	return yes, nil
}

// markActive records that community has a workflow now (a 30620 this
// instance stored).
func (s *Service) markActive(community string) {
	s.mu.Lock()
	if s.active == nil {
		s.active = map[string]activeEntry{}
	}
	s.active[community] = activeEntry{true, s.clock()}
	s.mu.Unlock()
}

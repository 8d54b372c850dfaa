package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/aws/lambdainvoke"
	"github.com/buzzrelay/relay/shared/aws/scheduler"
	domainpush "github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/service/push"
	"github.com/buzzrelay/relay/shared/service/workflow"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

// openWorkflows builds Buzz's workflows (shared/service/workflow): the
// write path's rules for 30620, 46020 and 46030/46031 (always, with
// writes), the hand-off to the runner after each commit and from a
// webhook (WORKFLOW_RUNNER_FUNCTION, invoked at LAMBDA_ENDPOINT), the
// routes' reads, and the runner's own work (runs).
func (a *App) openWorkflows(ctx context.Context, parts Parts) error {
	cfg := a.Config.Workflows
	policy := domainpush.Policy{AllowPrivate: cfg.AllowPrivate}
	w := &workflow.Service{Store: a.Store, Log: a.Log, Guard: a.Guard, Policy: policy, Client: push.NewClient(policy)}
	if a.Keys != nil {
		w.Signer = a.Keys
	}
	fn := cfg.RunnerFunction
	if fn == "" && parts&runs != 0 && parts&writes == 0 {
		// The runner itself: a long run goes on in its next invocation.
		fn = a.Config.Fanout.Self
	}
	if fn != "" && parts&(writes|runs) != 0 {
		sdk, err := awssdk.Load(ctx, a.Config.AWSRegion, a.Config.Fanout.LambdaEndpoint)
		if err != nil {
			return fmt.Errorf("workflows: %w", err)
		}
		w.Runner = lambdainvoke.New(sdk, a.Config.Fanout.LambdaEndpoint, fn, 4)
	}
	if parts&runs != 0 && cfg.ScheduleGroup != "" {
		s, err := newScheduler(ctx, a.Config)
		if err != nil {
			return err
		}
		w.Scheduler, w.Waker = s, s
	}
	if parts&writes != 0 {
		a.Ingest = a.Ingest.WithWorkflows(w)
	}
	a.Workflows = w
	return nil
}

// WorkflowRunner is functions/workflow-runner's handler: a commit's
// batch, a run to advance, or a schedule's fire (workflow.Service.Handle).
func (a *App) WorkflowRunner() func(context.Context, json.RawMessage) error {
	w := a.Workflows
	return func(ctx context.Context, payload json.RawMessage) error { return w.Handle(ctx, payload) }
}

// newScheduler is the runner's EventBridge Scheduler client
// (WORKFLOW_SCHEDULE_GROUP, WORKFLOW_SCHEDULER_ROLE_ARN,
// WORKFLOW_RUNNER_ARN, else the invocation's own ARN;
// AWS_ENDPOINT_URL_SCHEDULER locally).
func newScheduler(ctx context.Context, c *config.Config) (*scheduler.Client, error) {
	w := c.Workflows
	if w.SchedulerRole == "" {
		return nil, errors.New("WORKFLOW_SCHEDULE_GROUP is set without WORKFLOW_SCHEDULER_ROLE_ARN")
	}
	sdk, err := awssdk.Load(ctx, c.AWSRegion, w.SchedulerEndpoint)
	if err != nil {
		return nil, fmt.Errorf("workflows: %w", err)
	}
	return scheduler.New(sdk, w.SchedulerEndpoint, w.ScheduleGroup, w.SchedulerRole, w.RunnerArn)
}

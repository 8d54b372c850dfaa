package emulator

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/domain/workflow"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// EventBridge Scheduler in local form, for the workflow runner
// (shared/service/workflow): the one-time wakes of waiting runs (timers)
// and the schedules of schedule workflows (Schedules, from the
// workflows' rows, which is what the runner keeps its EventBridge
// schedules equal to).

// invoker is one function's asynchronous Invoke.
type invoker interface {
	InvokeAsync(ctx context.Context, payload []byte) error
}

// timerWaker invokes the runner with a run at its wake time, as an at()
// schedule does.
type timerWaker struct {
	invoke invoker
	log    *slog.Logger
}

// Wake invokes the runner with run at (a timer of this process).
func (w *timerWaker) Wake(_ context.Context, community, run string, at time.Time) error {
	payload, _ := json.Marshal(map[string]string{"community": community, "run": run})
	time.AfterFunc(time.Until(at)+50*time.Millisecond, func() {
		if err := w.invoke.InvokeAsync(context.Background(), payload); err != nil && w.log != nil {
			w.log.Warn("emulator: workflow wake", "run", run, "err", err)
		}
	})
	return nil
}

// FireSchedules invokes the runner for every schedule workflow due at now
// (to the minute): a rate(N minutes) every N minutes since the workflow
// was saved, a cron() when it matches. The tests call it with an emulated
// clock; WorkflowSchedules calls it every minute.
func (s *Stack) FireSchedules(ctx context.Context, st *store.Store, now time.Time) (int, error) {
	fn := s.Lambda.Functions[WorkflowRunnerFunction]
	if fn == nil {
		return 0, nil
	}
	all, err := st.WorkflowsListScheduled(ctx)
	if err != nil {
		return 0, err
	}
	minute := now.UTC().Truncate(time.Minute)
	invoke := s.Lambda.Invoker(WorkflowRunnerFunction)
	n := 0
	for community, ws := range all {
		for _, w := range ws {
			if !due(w, minute) {
				continue
			}
			payload, _ := json.Marshal(map[string]any{"community": community, "workflow": w.ID, "fire": minute.Unix()})
			if err := invoke.InvokeAsync(ctx, payload); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// due reports whether w's schedule fires at minute.
func due(w *workflow.Workflow, minute time.Time) bool {
	expr := w.Schedule
	switch {
	case strings.HasPrefix(expr, "rate("):
		f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(expr, "rate("), ")"))
		if len(f) != 2 {
			return false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n <= 0 {
			return false
		}
		since := (minute.Unix() - (w.UpdatedAt - w.UpdatedAt%60)) / 60
		return since > 0 && since%n == 0
	case strings.HasPrefix(expr, "cron("):
		c, err := workflow.ParseCron("0 " + strings.TrimSuffix(strings.TrimPrefix(expr, "cron("), ")"))
		return err == nil && c.Matches(minute)
	}
	return false
}

// WorkflowSchedules fires the due schedules every minute until ctx ends,
// as EventBridge Scheduler does in AWS.
func (s *Stack) WorkflowSchedules(ctx context.Context, st *store.Store, log *slog.Logger) {
	if s.Lambda.Functions[WorkflowRunnerFunction] == nil {
		return
	}
	go func() {
		for {
			next := time.Now().Truncate(time.Minute).Add(time.Minute)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(next)):
				if _, err := s.FireSchedules(ctx, st, next); err != nil && log != nil {
					log.Warn("emulator: workflow schedules", "err", err)
				}
			}
		}
	}()
}

package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/buzzrelay/relay/shared/aws/scheduler"
	"github.com/buzzrelay/relay/shared/domain/workflow"
)

// EventBridge Scheduler in local form, for the workflow runner
// (shared/service/workflow, shared/aws/scheduler): the runner keeps one
// schedule per schedule workflow and a one-time at() schedule per wait
// through the Scheduler API at the stack's address, in process and in
// processes mode alike; at() schedules fire on a timer, rate() and cron()
// ones when FireSchedules is called (every minute under make dev, with an
// emulated clock in the tests). Each fire invokes its target function
// asynchronously through the stack's Lambda API, its input's
// <aws.scheduler.scheduled-time> replaced by the fire's time.

// Local names of the runner's schedule group and of the role its
// schedules invoke it with (lambdas.RefWorkflowScheduleGroup,
// RefWorkflowSchedulerRoleArn).
const (
	ScheduleGroup        = "buzz-workflows"
	SchedulerRoleArn     = "arn:aws:iam::000000000000:role/localdev-workflow-scheduler"
	localFunctionArnBase = "arn:aws:lambda:us-east-1:000000000000:function:"
)

// SchedulerEnv is the environment that points a function built in this
// process (app.Local) at the stack's Scheduler API at addr; the
// processes get the same through LocalSetup (their own ARN comes from
// their invocation there).
func SchedulerEnv(addr string) map[string]string {
	return map[string]string{
		"WORKFLOW_SCHEDULE_GROUP":     ScheduleGroup,
		"WORKFLOW_SCHEDULER_ROLE_ARN": SchedulerRoleArn,
		"WORKFLOW_RUNNER_ARN":         localFunctionArnBase + WorkflowRunnerFunction,
		"AWS_ENDPOINT_URL_SCHEDULER":  "http://" + addr,
	}
}

// Schedule is one schedule the SchedulerAPI holds.
type Schedule struct {
	Group, Name, Expression string
	Function, Input         string // the target
	Created                 time.Time
	deleteAfter             bool
	timer                   *time.Timer
}

// SchedulerAPI serves the Scheduler API's CreateSchedule (POST),
// UpdateSchedule (PUT) and DeleteSchedule (DELETE) on /schedules/{name}.
type SchedulerAPI struct {
	Lambda *LambdaAPI
	Log    *slog.Logger

	mu        sync.Mutex
	schedules map[string]*Schedule // group/name
}

// Wrap serves the Scheduler API's paths and passes the rest to next.
func (s *SchedulerAPI) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.URL.Path, "/schedules/"); ok && name != "" && !strings.Contains(name, "/") {
			s.serve(w, r, name)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type schedulerBody struct {
	GroupName             string `json:"GroupName"`
	ScheduleExpression    string `json:"ScheduleExpression"`
	ActionAfterCompletion string `json:"ActionAfterCompletion"`
	Target                struct {
		Arn, RoleArn, Input string
	} `json:"Target"`
}

func (s *SchedulerAPI) serve(w http.ResponseWriter, r *http.Request, name string) {
	answer := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		b, _ := json.Marshal(map[string]string{"Message": msg})
		_, _ = w.Write(b)
	}
	if r.Method == http.MethodDelete {
		group := r.URL.Query().Get("groupName")
		if group == "" {
			group = "default"
		}
		if !s.Delete(group, name) {
			answer(http.StatusNotFound, "Schedule "+name+" does not exist.")
			return
		}
		answer(http.StatusOK, "")
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		answer(http.StatusMethodNotAllowed, "not served here")
		return
	}
	var b schedulerBody
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&b); err != nil {
		answer(http.StatusBadRequest, "ValidationException: "+err.Error())
		return
	}
	if b.GroupName == "" {
		b.GroupName = "default"
	}
	fn := b.Target.Arn[strings.LastIndex(b.Target.Arn, ":function:")+len(":function:"):]
	if i := strings.IndexByte(fn, ':'); i >= 0 {
		fn = fn[:i] // a qualifier
	}
	if !strings.Contains(b.Target.Arn, ":function:") || b.Target.RoleArn == "" {
		answer(http.StatusBadRequest, "ValidationException: the target needs a function ARN and a role")
		return
	}
	sc := &Schedule{Group: b.GroupName, Name: name, Expression: b.ScheduleExpression, Function: fn, Input: b.Target.Input,
		Created: time.Now(), deleteAfter: b.ActionAfterCompletion == "DELETE"}
	var at time.Time
	if inner, ok := strings.CutPrefix(sc.Expression, "at("); ok {
		t, err := time.Parse("2006-01-02T15:04:05", strings.TrimSuffix(inner, ")"))
		if err != nil {
			answer(http.StatusBadRequest, "ValidationException: "+err.Error())
			return
		}
		at = t
	} else if !strings.HasPrefix(sc.Expression, "rate(") && !strings.HasPrefix(sc.Expression, "cron(") {
		answer(http.StatusBadRequest, "ValidationException: invalid schedule expression")
		return
	}
	key := sc.Group + "/" + name
	s.mu.Lock()
	old, exists := s.schedules[key]
	switch {
	case r.Method == http.MethodPost && exists:
		s.mu.Unlock()
		answer(http.StatusConflict, "Schedule "+name+" already exists.")
		return
	case r.Method == http.MethodPut && !exists:
		s.mu.Unlock()
		answer(http.StatusNotFound, "Schedule "+name+" does not exist.")
		return
	}
	if exists && old.timer != nil {
		old.timer.Stop()
	}
	if s.schedules == nil {
		s.schedules = map[string]*Schedule{}
	}
	s.schedules[key] = sc
	if !at.IsZero() {
		sc.timer = time.AfterFunc(time.Until(at)+50*time.Millisecond, func() { s.fireAt(sc, at) })
	}
	s.mu.Unlock()
	answer(http.StatusOK, "")
}

// fireAt fires a one-time schedule and deletes it when it says so.
func (s *SchedulerAPI) fireAt(sc *Schedule, at time.Time) {
	s.mu.Lock()
	current := s.schedules[sc.Group+"/"+sc.Name] == sc
	if current && sc.deleteAfter {
		delete(s.schedules, sc.Group+"/"+sc.Name)
	}
	s.mu.Unlock()
	if current {
		if err := s.invoke(context.Background(), sc, at); err != nil {
			s.log().Warn("emulator: schedule", "name", sc.Name, "err", err)
		}
	}
}

func (s *SchedulerAPI) invoke(ctx context.Context, sc *Schedule, at time.Time) error {
	if s.Lambda.Functions[sc.Function] == nil {
		return errors.New("emulator: no function " + sc.Function)
	}
	input := strings.ReplaceAll(sc.Input, scheduler.ScheduledTime, at.UTC().Format(time.RFC3339))
	return s.Lambda.Invoker(sc.Function).InvokeAsync(ctx, []byte(input))
}

func (s *SchedulerAPI) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

// Delete removes the schedule group/name; false when there was none.
func (s *SchedulerAPI) Delete(group, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.schedules[group+"/"+name]
	if ok {
		if sc.timer != nil {
			sc.timer.Stop()
		}
		delete(s.schedules, group+"/"+name)
	}
	return ok
}

// Schedules are the schedules held now, by group and name.
func (s *SchedulerAPI) Schedules() []Schedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Schedule, 0, len(s.schedules))
	for _, sc := range s.schedules {
		c := *sc
		c.timer = nil
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group+"/"+out[i].Name < out[j].Group+"/"+out[j].Name })
	return out
}

// FireSchedules invokes the target of every rate() and cron() schedule
// due at now (to the minute): a rate(N minutes) every N minutes since it
// was created, a cron() when it matches. It returns how many fired.
func (s *SchedulerAPI) FireSchedules(ctx context.Context, now time.Time) (int, error) {
	minute := now.UTC().Truncate(time.Minute)
	n := 0
	for _, sc := range s.Schedules() {
		if !due(sc, minute) {
			continue
		}
		if err := s.invoke(ctx, &sc, minute); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// due reports whether sc fires at minute.
func due(sc Schedule, minute time.Time) bool {
	expr := sc.Expression
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
		switch strings.TrimSuffix(f[1], "s") {
		case "hour":
			n *= 60
		case "day":
			n *= 24 * 60
		}
		since := (minute.Unix() - sc.Created.UTC().Truncate(time.Minute).Unix()) / 60
		return since > 0 && since%n == 0
	case strings.HasPrefix(expr, "cron("):
		c, err := workflow.ParseCron("0 " + strings.TrimSuffix(strings.TrimPrefix(expr, "cron("), ")"))
		return err == nil && c.Matches(minute)
	}
	return false
}

// WorkflowSchedules fires the due schedules every minute until ctx ends,
// as EventBridge Scheduler does in AWS.
func (s *Stack) WorkflowSchedules(ctx context.Context, log *slog.Logger) {
	if s.Scheduler == nil {
		return
	}
	go func() {
		for {
			next := time.Now().Truncate(time.Minute).Add(time.Minute)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(next)):
				if _, err := s.Scheduler.FireSchedules(ctx, next); err != nil && log != nil {
					log.Warn("emulator: workflow schedules", "err", err)
				}
			}
		}
	}()
}

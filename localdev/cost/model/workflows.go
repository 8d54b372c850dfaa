package model

import (
	"fmt"
	"math"
)

// Buzz's workflows (docs/workflows.md) in a community's month: what the
// runner, its schedules and the database wakes they cause cost. A run
// triggered by a message rides on the wake its message's commit already
// caused (the hand-off follows the commit); a schedule's fire and a
// webhook call find the database wherever it is, so each may resume it.

// Workflows is one community's workflow traffic in a month.
type Workflows struct {
	Definitions int     // saved workflows (rows only: no standing cost)
	Runs        float64 // runs a month from messages, webhooks and 46020
	Schedules   int     // schedule workflows, one EventBridge schedule each
	// EveryMinutes is the schedules' interval.
	EveryMinutes float64
	// Forged are webhook calls a month that match no workflow (a wrong
	// secret, an unknown id): refused, and each may wake the database to
	// learn so when the secret lives only there.
	Forged float64
}

// RunnerSeconds is a runner invocation's billed time assumed here: a run
// of two or three steps, each a transaction and the posts' delivery
// (about 0.1 s measured under localdev, docs/benchmarks.md), doubled for
// Aurora's and @connections' round trips in AWS.
const RunnerSeconds = 0.3

// SchedulerPerMillion is EventBridge Scheduler's price per invocation
// (aws.amazon.com/eventbridge/pricing, us-east-1, after the free tier this
// model leaves out, as every other line).
const SchedulerPerMillion = 1.00

// WorkflowDesign is one way of running the schedules and the webhook
// door, priced by WorkflowBill.
type WorkflowDesign struct {
	Name, About string
	// Aligned: every schedule with the same interval fires in the same
	// minute (the runner writes rate(N minutes) as a cron() on the clock),
	// so the fires share one database wake; otherwise each schedule's
	// fires start from when it was saved, spread over the interval.
	Aligned bool
	// SecretOffDB: the webhook door checks the id and the secret's hash
	// in the community's directory document (S3) before the database, so
	// a call that cannot match never wakes it.
	SecretOffDB bool
}

// WorkflowDesigns: as built (intervals that divide an hour or a day on
// the clock, workflow.Trigger.ScheduleExpression), the schedules as they
// would be from when each was saved, and the webhook door that would
// refuse off the database.
var WorkflowDesigns = []WorkflowDesign{
	{Name: "as built", About: "intervals that divide an hour fire on the clock, together (one wake per interval); the webhook door reads the secret from Postgres", Aligned: true},
	{Name: "from save", About: "each schedule fires every N minutes from when it was saved, spread over the interval (the rate() a plain port writes)"},
	{Name: "as built+directory", About: "as built, and a webhook call that matches no workflow refused from the directory document (S3), not the database (not built)", Aligned: true, SecretOffDB: true},
}

// WorkflowMonth is one design's month.
type WorkflowMonth struct {
	Design           WorkflowDesign
	Fires            float64 // schedule fires
	Resumes          int
	AwakeHours       float64 // database awake because of the fires and forged calls
	Lines            []Line
	DatabaseNeverOff bool // MinACU > 0: no wake is extra
}

// WorkflowBill prices w on s at p in design d.
func WorkflowBill(w Workflows, d WorkflowDesign, s Stack, p Prices) (WorkflowMonth, error) {
	if w.Runs < 0 || w.Schedules < 0 || w.Forged < 0 || w.Definitions < 0 || (w.Schedules > 0 && w.EveryMinutes <= 0) {
		return WorkflowMonth{}, fmt.Errorf("workflow figures cannot be negative, and schedules need an interval")
	}
	f, ok := s.Function("workflow-runner")
	if !ok {
		return WorkflowMonth{}, fmt.Errorf("the stack does not deploy the workflow runner")
	}
	m := WorkflowMonth{Design: d}
	perSchedule := 0.0
	if w.Schedules > 0 {
		perSchedule = math.Floor(HoursPerMonth * 60 / w.EveryMinutes)
	}
	m.Fires = perSchedule * float64(w.Schedules)
	invocations := w.Runs + m.Fires
	gbPrice := p.LambdaGBSecondArm
	if f.Arch == "x86_64" {
		gbPrice = p.LambdaGBSecondX86
	}
	m.Lines = append(m.Lines,
		Line{fmt.Sprintf("workflow-runner: %.0f runs + %.0f schedule fires, %.1f s each at %g MB", w.Runs, m.Fires, RunnerSeconds, f.MemoryMB),
			invocations*p.LambdaPerMillion/1e6 + invocations*RunnerSeconds*f.MemoryMB/1024*gbPrice},
		Line{fmt.Sprintf("EventBridge Scheduler: %.0f fires", m.Fires), m.Fires * SchedulerPerMillion / 1e6},
		Line{fmt.Sprintf("HTTP API: %.0f webhook calls that match nothing", w.Forged), w.Forged * p.HTTPPerMillion / 1e6},
	)
	db := s.Database
	if db.MinACU > 0 {
		m.DatabaseNeverOff = true
		return m, nil
	}
	var at []float64
	if w.Schedules > 0 {
		step := w.EveryMinutes * 60
		for i := 0; i < w.Schedules; i++ {
			offset := 0.0
			if !d.Aligned {
				offset = step * float64(i) / float64(w.Schedules)
			}
			for k := 0.0; k < perSchedule; k++ {
				at = append(at, offset+k*step)
			}
		}
	}
	if w.Forged > 0 && !d.SecretOffDB {
		step := monthSeconds / w.Forged
		for k := 0.0; k < w.Forged; k++ {
			at = append(at, (k+0.5)*step)
		}
	}
	resumes, awake := Awake(at, db)
	m.Resumes, m.AwakeHours = resumes, awake/3600
	m.Lines = append(m.Lines, Line{fmt.Sprintf("Aurora awake for them: %.1f h at %.1f ACU (%d resumes)", m.AwakeHours, 0.5, resumes), m.AwakeHours * 0.5 * p.ACUHour})
	if d.SecretOffDB {
		m.Lines = append(m.Lines, Line{fmt.Sprintf("S3: %.0f directory reads for webhook calls", w.Forged), w.Forged * p.S3GetPerThousand / 1000})
	}
	return m, nil
}

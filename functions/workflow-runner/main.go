// Command workflow-runner runs Buzz's channel workflows
// (shared/service/workflow): ingest and ws-message invoke it
// asynchronously with the ids a commit stored when a workflow may care,
// the webhook route with a run to start, and EventBridge Scheduler with a
// schedule's fire or a waiting run's wake. It matches message triggers,
// takes each run's steps (one row each: its idempotency key), keeps the
// schedules and wakes, and posts what runs send. A failed run is retried
// by Lambda; a step it already took stays taken.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.RunnerParts)
	if err != nil {
		app.Fatal(log, "workflow-runner: cold start", err)
	}
	lambda.Start(a.WorkflowRunner()) // workflow.Service.Handle
}

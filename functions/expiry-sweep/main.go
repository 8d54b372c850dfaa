// Command expiry-sweep is the NIP-40 sweep (shared/service/expiry): an
// EventBridge Scheduler schedule invokes it, and it deletes the events
// whose expiration has passed, in batches, until none is left or its time
// is up. Reads never serve an expired event whether or not it ran.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.SweepParts)
	if err != nil {
		app.Fatal(log, "expiry-sweep: cold start", err)
	}
	lambda.Start(a.SweepHandler()) // expiry.Sweeper.Sweep
}

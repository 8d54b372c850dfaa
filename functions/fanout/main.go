// Command fanout is the fan-out Lambda: ingest and ws-message invoke it
// asynchronously (InvocationType Event) with a large audience, which it
// splits, invoking itself for the other parts; it re-checks each reader's
// access and posts through the @connections API (WS_MANAGEMENT_ENDPOINT).
// It never signs: no relay key.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.FanoutParts)
	if err != nil {
		app.Fatal(log, "fanout: cold start", err)
	}
	lambda.Start(a.FanoutBatch()) // fanout.DeliverBatch
}

// Command ingest is the Lambda behind POST /events. With
// WS_MANAGEMENT_ENDPOINT set, events it stores are delivered live to
// WebSocket subscribers after their transaction commits.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/app"
	"github.com/buzzrelay/relay/shared/bridge"
)

func main() {
	log := app.Logger()
	ctx := context.Background()
	a, err := app.Build(ctx, log)
	if err != nil {
		app.Fatal(log, "ingest: cold start", err)
	}
	var fo bridge.Fanout
	if a.Config.WSManagementEndpoint != "" {
		f, err := a.Fanout(ctx)
		if err != nil {
			app.Fatal(log, "ingest: cold start", err)
		}
		fo = f
	} else {
		log.Warn("WS_MANAGEMENT_ENDPOINT is not set: events posted over HTTP reach WebSocket subscribers only on their next REQ")
	}
	lambda.Start(a.IngestHTTP(fo))
}

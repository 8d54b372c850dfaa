// Command ingest is the Lambda behind POST /events. With
// WS_MANAGEMENT_ENDPOINT set, events it stores are delivered live to
// WebSocket subscribers after their transaction commits.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.IngestParts)
	if err != nil {
		app.Fatal(log, "ingest: cold start", err)
	}
	lambda.Start(a.IngestHTTP()) // apigw → bridge → relay.Publish
}

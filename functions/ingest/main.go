// Command ingest is the Lambda behind POST /events.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/app"
)

func main() {
	log := app.Logger()
	a, err := app.Build(context.Background(), log)
	if err != nil {
		app.Fatal(log, "ingest: cold start", err)
	}
	lambda.Start(a.IngestHTTP(nil))
}

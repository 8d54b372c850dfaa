// Command query is the Lambda behind POST /query, POST /count, GET /
// (NIP-11) and GET /healthz.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.QueryParts)
	if err != nil {
		app.Fatal(log, "query: cold start", err)
	}
	lambda.Start(a.QueryHTTP()) // apigw → bridge → relay.Read/Count, nip86
}

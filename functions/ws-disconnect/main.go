// Command ws-disconnect is the Lambda behind the WebSocket API's
// $disconnect route: it forgets the connection and its subscriptions (with
// SESSION_BUCKET, a mark in S3 the next write folds: no database
// statement).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.DisconnectParts)
	if err != nil {
		app.Fatal(log, "ws-disconnect: cold start", err)
	}
	lambda.Start(a.WebSocket()) // apigw → wsrelay → sessions
}

// Command ws-authorize is the WebSocket API's $connect authorizer on a
// deployment serving several hostnames: it records the host the client
// addressed in the authorizer context, which API Gateway hands to every
// later event of the connection (their own requests carry no headers). It
// allows every connection and touches nothing.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.AuthorizeParts)
	if err != nil {
		app.Fatal(log, "ws-authorize: cold start", err)
	}
	lambda.Start(a.Authorizer()) // apigw.Authorize
}

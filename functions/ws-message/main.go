// Command ws-message is the Lambda behind the WebSocket API's $default
// route: AUTH, EVENT, REQ, CLOSE and COUNT, with replies and live fan-out
// posted through the @connections API (WS_MANAGEMENT_ENDPOINT).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.MessageParts)
	if err != nil {
		app.Fatal(log, "ws-message: cold start", err)
	}
	lambda.Start(a.WebSocket()) // apigw → wsrelay → relay
}

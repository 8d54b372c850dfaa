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
	log := app.Logger()
	h, err := app.MessageFunction(context.Background(), log)
	if err != nil {
		app.Fatal(log, "ws-message: cold start", err)
	}
	lambda.Start(h)
}

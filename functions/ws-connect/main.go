// Command ws-connect is the Lambda behind the WebSocket API's $connect
// route: it accepts the connection without touching the database (the first
// message registers it) and hands it to the push function (PUSH_FUNCTION,
// one asynchronous Invoke), which posts its NIP-42 challenge once the
// socket is open; it posts nothing itself.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.ConnectParts)
	if err != nil {
		app.Fatal(log, "ws-connect: cold start", err)
	}
	lambda.Start(a.WebSocket()) // apigw → wsrelay.Connect
}

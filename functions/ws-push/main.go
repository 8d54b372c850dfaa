// Command ws-push is the push function, which posts what the relay sends
// unasked (shared/service/wire, push.go): ws-connect invokes it
// asynchronously with each accepted connection, whose NIP-42 challenge it
// posts as soon as API Gateway takes posts to it (retrying 410 Gone while
// the socket opens) and records among the open connections in the
// session store; a schedule invokes it for the liveness frame every open
// connection gets while idle. No database: the challenge is derived from
// the connection id under the relay key.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.PushParts)
	if err != nil {
		app.Fatal(log, "ws-push: cold start", err)
	}
	lambda.Start(a.PushHandler()) // wire.Pusher.Handle
}

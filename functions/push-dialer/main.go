// Command push-dialer is the push sender's HTTP side, outside the VPC: the
// sender (functions/push-sender, in the VPC beside the database) claims a
// delivery, builds its request and invokes this function synchronously
// with it; this function POSTs it to the callback or the push gateway,
// refusing every non-public address at dial, and answers the status and
// the start of the body. No database, no key, no secret
// (shared/service/push, dial.go).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.PushDialerParts)
	if err != nil {
		app.Fatal(log, "push-dialer: cold start", err)
	}
	lambda.Start(a.PushDialer()) // push.Direct.Dial
}

// Command push-sender is the push sender Lambda: ingest and ws-message
// invoke it asynchronously (InvocationType Event) with the ids of the
// events a commit stored in a community with push subscriptions; it
// matches them against the community's NIP-9a subscriptions and NIP-PL
// leases, re-checks each subscriber's read access and POSTs callbacks and
// NIP-98-signed gateway wakes (shared/service/push). A failed run is
// retried by Lambda, then its event goes to the on-failure queue.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

func main() {
	log := app.ColdStart()
	a, err := app.Build(context.Background(), log, app.PushSenderParts)
	if err != nil {
		app.Fatal(log, "push-sender: cold start", err)
	}
	if a.Notify == nil {
		app.Fatal(log, "push-sender: cold start", app.ErrPushOff)
	}
	lambda.Start(a.PushSender()) // push.Service.Deliver
}

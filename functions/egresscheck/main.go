// Command egresscheck is the deploy-time EgressCheck custom resource
// (Provider framework onEvent), run in the functions' subnets with their
// security group: it resolves and opens TLS to every AWS endpoint the
// functions call and fails the deployment, naming the endpoint and the
// remedy, when one is unreachable (shared/service/egress,
// shared/wiring/provision).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/service/egress"
	"github.com/buzzrelay/relay/shared/wiring/app"
	"github.com/buzzrelay/relay/shared/wiring/provision"
)

func main() {
	lambda.Start(provision.EgressHandler(app.ColdStart(), egress.New()))
}

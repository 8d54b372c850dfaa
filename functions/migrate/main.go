// Command migrate is the deploy-time trigger, a CloudFormation custom
// resource (Provider framework onEvent): it applies the migrations, creates
// the relay's IAM database user and the community's relay key once, and
// answers the key's pubkey and ciphertext (shared/wiring/provision). Running it
// again changes nothing; Delete never touches data.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/buzzrelay/relay/shared/wiring/app"
	"github.com/buzzrelay/relay/shared/wiring/provision"
)

func main() {
	lambda.Start(provision.Handler(app.ColdStart()))
}

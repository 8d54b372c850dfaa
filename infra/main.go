// Command infra is the CDK app of the buzz relay: `make synth` (cdk synth)
// writes the CloudFormation template offline, `make deploy` deploys it. See
// docs/deploy.md.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	s, err := SettingsFrom(app.Node())
	if err == nil {
		_, err = NewRelayStack(app, s)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
	app.Synth(nil)
}

package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
)

// KlipyKeyParameter is the NoEcho CloudFormation parameter that carries
// the KLIPY key into the secret once (`--parameters KlipyApiKey=...` on
// the deploy that adds -c gifs=true; later deploys reuse it).
const KlipyKeyParameter = "KlipyApiKey"

// newKlipySecret is Buzz's GIF proxy's key: with -c gifs=true a Secrets
// Manager secret holding the KLIPY API key, which the function serving
// /gifs/* reads at cold start (KLIPY_SECRET_ARN, shared/wiring/config
// gifs.go); nil without it, and then no GIF route is deployed and NIP-11
// does not advertise GIFs. The key never appears in the template: the
// secret's value is the NoEcho parameter's, which CloudFormation masks.
// It goes with the stack (no data depends on it).
func newKlipySecret(stack awscdk.Stack, s Settings) awssecretsmanager.Secret {
	if !s.GIFs {
		return nil
	}
	key := awscdk.NewCfnParameter(stack, jsii.String(KlipyKeyParameter), &awscdk.CfnParameterProps{
		Type:        jsii.String("String"),
		NoEcho:      jsii.Bool(true),
		MinLength:   jsii.Number(1),
		Description: jsii.String("KLIPY API key of Buzz's GIF proxy (-c gifs=true); given once, later deploys keep it"),
	})
	return awssecretsmanager.NewSecret(stack, jsii.String("KlipySecret"), &awssecretsmanager.SecretProps{
		Description:       jsii.String("KLIPY API key of the relay's GIF proxy (POST /gifs/*), community " + s.Community),
		SecretStringValue: awscdk.SecretValue_CfnParameter(key),
		RemovalPolicy:     awscdk.RemovalPolicy_DESTROY,
	})
}

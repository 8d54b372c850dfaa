package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/customresources"
	"github.com/aws/jsii-runtime-go"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// EgressCheckResourceType is the CloudFormation type of the EgressCheck
// custom resource; its Endpoints property is read by
// shared/wiring/provision.EgressEndpoints.
const EgressCheckResourceType = "Custom::BuzzEgressCheck"

// EgressEndpointsOutput is the stack output with the checked endpoints as
// JSON, which `go run ./localdev/egresscheck -outputs` reads (its
// OutputName).
const EgressEndpointsOutput = "EgressEndpoints"

// The services the functions call, endpointURL and egressNetwork are
// lambdas' (shared/wiring/lambdas/endpoints.go): the functions'
// environment names the same endpoints this check opens.
const (
	svcKMS            = lambdas.SvcKMS
	svcLambda         = lambdas.SvcLambda
	svcS3             = lambdas.SvcS3
	svcSecretsManager = lambdas.SvcSecretsManager
	svcDynamoDB       = lambdas.SvcDynamoDB
)

func endpointURL(stack awscdk.Stack, s Settings, service string) string {
	return lambdas.EndpointURL(s.lambdaSettings(), *stack.Region(), service)
}

func egressNetwork(s Settings, service string) string {
	return lambdas.EgressNetwork(s.lambdaSettings(), service)
}

// egressEndpoints is the EgressCheck resource's Endpoints property: every
// endpoint a deployed function calls (see Function and the environment
// built in NewRelayStack), with the host of this stack's @connections API.
func egressEndpoints(stack awscdk.Stack, s Settings, wsApi awsapigatewayv2.WebSocketApi) []map[string]string {
	ep := func(name, service string) map[string]string {
		return map[string]string{"Name": name, "Url": endpointURL(stack, s, service), "Network": egressNetwork(s, service)}
	}
	out := []map[string]string{
		{
			"Name":    "WebSocket @connections (every WebSocket answer and live delivery)",
			"Url":     "https://" + *wsApi.ApiId() + ".execute-api." + *stack.Region() + "." + *stack.UrlSuffix(),
			"Network": egressNetwork(s, "execute-api"),
		},
		ep("KMS (the relay key)", svcKMS),
		ep("Lambda (fan-out invokes)", svcLambda),
		ep("Secrets Manager (migrate; dbAuth=secret; livekitSecret)", svcSecretsManager),
		ep("DynamoDB (the session table)", svcDynamoDB),
	}
	if s.Media {
		out = append(out, ep("S3 (media bucket)", svcS3))
	}
	return out
}

// newEgressCheck is the EgressCheck custom resource, handled by fn (in the
// functions' subnets with their security group) through the CDK Provider
// framework. The framework's own function runs outside the VPC: it invokes
// fn synchronously and answers CloudFormation's presigned S3 ResponseURL
// itself. A raw custom resource would have fn PUT that answer, over the
// very egress it checks: a broken egress would then leave the stack waiting
// for an answer that cannot arrive (an hour, CloudFormation's timeout)
// instead of failing with the check's message, which the framework passes
// on as the resource's failure reason.
//
// Order: it waits for both APIs (it needs the WebSocket API's id for the
// @connections host), and the migrate resource and both stages wait for
// it, so no function runs and no route is served before the check passes.
func newEgressCheck(stack awscdk.Stack, s Settings, fn awslambda.Function, httpApi awsapigatewayv2.HttpApi, wsApi awsapigatewayv2.WebSocketApi) awscdk.CustomResource {
	logs := awslogs.NewLogGroup(stack, jsii.String("egresscheck-provider-logs"), &awslogs.LogGroupProps{
		Retention:     s.LogRetention,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	provider := customresources.NewProvider(stack, jsii.String("EgressCheckProvider"), &customresources.ProviderProps{
		OnEventHandler: fn,
		LogGroup:       logs,
	})
	eps := egressEndpoints(stack, s, wsApi)
	cr := awscdk.NewCustomResource(stack, jsii.String("EgressCheck"), &awscdk.CustomResourceProps{
		ServiceToken: provider.ServiceToken(),
		ResourceType: jsii.String(EgressCheckResourceType),
		Properties: &map[string]any{
			"Egress":    s.Egress,
			"Endpoints": eps,
		},
		ServiceTimeout: awscdk.Duration_Minutes(jsii.Number(5)),
	})
	// The APIs' own resources only: their stages wait for the check.
	cr.Node().AddDependency(httpApi.Node().DefaultChild(), wsApi.Node().DefaultChild())
	awscdk.NewCfnOutput(stack, jsii.String(EgressEndpointsOutput), &awscdk.CfnOutputProps{
		Value:       stack.ToJsonString(eps, nil),
		Description: jsii.String("endpoints the EgressCheck resource checks (go run ./localdev/egresscheck -outputs FILE)"),
	})
	return cr
}

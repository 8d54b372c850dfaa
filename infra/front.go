package main

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfrontorigins"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/customresources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The front (issue 55): one CloudFront distribution in front of both APIs
// on every deploy, so the Buzz app gets one URL for wss://host and
// https://host/query: https://<domain> with -c domain, else the
// distribution's own https://<id>.cloudfront.net. API Gateway will not map
// an HTTP and a WebSocket API to one hostname; CloudFront can front both
// (it carries WebSocket upgrades when the Sec-WebSocket-* headers reach
// the origin, which the all-viewer origin request policy does), and a
// viewer-request CloudFront Function may pick the origin of a request
// (cf.selectRequestOriginById, JavaScript runtime 2.0). The distribution
// also takes Buzz desktop's large uploads (issue 52) on its /media/upload
// behaviour: a Lambda@Edge function (edgeupload.js, in a companion stack
// in us-east-1, where Lambda@Edge functions must live) hands their bytes
// to S3 through the relay's presigned PUT. docs/deploy.md, "One hostname".

// Origin ids of the distribution; the viewer-request function selects the
// WebSocket one by id.
const (
	httpOriginID = "http-api"
	wsOriginID   = "ws-api"
)

// EdgeRegion is where Lambda@Edge functions are created.
const EdgeRegion = "us-east-1"

// UploadBehaviorPath is the behaviour of Buzz desktop's upload call.
const UploadBehaviorPath = "/media/upload"

// upgradeRouter is the CloudFront Function (JavaScript runtime 2.0) that
// sends a WebSocket upgrade to the WebSocket API's stage and leaves every
// other request on the HTTP API, so NIP-11, /query and wss:// share one
// host; it copies the viewer's Host into HostHeader for the functions (the
// origin gets the API's own Host).
const upgradeRouter = `import cf from 'cloudfront';
function handler(event) {
  var req = event.request;
  req.headers['` + HostHeader + `'] = { value: req.headers.host.value };
  var up = req.headers['upgrade'];
  if (up && up.value.toLowerCase() === 'websocket') {
    cf.selectRequestOriginById('` + wsOriginID + `');
    if (req.uri === '/') { req.uri = '/` + WebSocketStageName + `'; }
  }
  return req;
}
`

//go:embed edgeupload.js
var edgeUploadJS string

// EdgeUploadCode is edgeupload.js with this stack's constants written in
// (Lambda@Edge takes no environment variables).
func EdgeUploadCode(s Settings) string {
	return strings.NewReplacer("__DIRECT_MAX__", strconv.FormatInt(s.MediaDirectMaxBytes, 10), "__HOST_HEADER__", HostHeader).Replace(edgeUploadJS)
}

// EdgeStackName is the companion stack of the edge upload function.
func (s Settings) EdgeStackName() string { return s.StackName + "-edge" }

// EdgeUploadFunctionName is the edge upload function's name (fixed, so
// the main stack can name its version across regions).
func (s Settings) EdgeUploadFunctionName() string { return s.StackName + "-edge-upload" }

// EdgeUploadAlias is the alias on the function's current version.
const EdgeUploadAlias = "live"

// newEdgeUploadStack is the companion stack in us-east-1: the edge
// upload function (Node.js, 128 MB, 30 s: Lambda@Edge's limit for origin
// events), a version of it and the alias naming that version. Nothing in
// it runs or costs while no large upload is made.
func newEdgeUploadStack(scope constructs.Construct, s Settings) awscdk.Stack {
	st := awscdk.NewStack(scope, jsii.String(s.EdgeStackName()), &awscdk.StackProps{
		Env:         &awscdk.Environment{Region: jsii.String(EdgeRegion)},
		Description: jsii.String("Buzz relay " + s.StackName + ": the Lambda@Edge function of large uploads (PUT /media/upload)"),
	})
	awscdk.Tags_Of(st).Add(jsii.String("app"), jsii.String("buzz-relay"), nil)
	awscdk.Tags_Of(st).Add(jsii.String("buzz:community"), jsii.String(s.Community), nil)
	role := awsiam.NewRole(st, jsii.String("EdgeUploadRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewCompositePrincipal(awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
			awsiam.NewServicePrincipal(jsii.String("edgelambda.amazonaws.com"), nil)),
		ManagedPolicies: &[]awsiam.IManagedPolicy{awsiam.ManagedPolicy_FromAwsManagedPolicyName(jsii.String("service-role/AWSLambdaBasicExecutionRole"))},
	})
	fn := awslambda.NewFunction(st, jsii.String("EdgeUpload"), &awslambda.FunctionProps{
		FunctionName: jsii.String(s.EdgeUploadFunctionName()),
		Description:  jsii.String("buzz relay edge upload: PUT /media/upload above the direct limit to S3"),
		Runtime:      awslambda.Runtime_NODEJS_22_X(),
		Handler:      jsii.String("index.handler"),
		Code:         awslambda.Code_FromInline(jsii.String(EdgeUploadCode(s))),
		MemorySize:   jsii.Number(128),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(30)),
		Role:         role,
		// Its runs log to /aws/lambda/us-east-1.<name> in each edge
		// region; this group only takes direct invokes, and goes with the
		// stack.
		LogGroup: awslogs.NewLogGroup(st, jsii.String("EdgeUploadLogs"), &awslogs.LogGroupProps{
			Retention:     s.LogRetention,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		}),
	})
	awslambda.NewAlias(st, jsii.String("EdgeUploadLive"), &awslambda.AliasProps{
		AliasName: jsii.String(EdgeUploadAlias),
		Version:   fn.CurrentVersion(),
	})
	return st
}

// edgeUploadVersion is the edge function's current version as the main
// stack sees it: read at deploy time from the alias in us-east-1
// (lambda:GetAlias on that one function), re-read when the code changes.
func edgeUploadVersion(stack awscdk.Stack, s Settings) awslambda.IVersion {
	sum := sha256.Sum256([]byte(EdgeUploadCode(s)))
	fnArn := "arn:" + *stack.Partition() + ":lambda:" + EdgeRegion + ":" + *stack.Account() + ":function:" + s.EdgeUploadFunctionName()
	get := customresources.NewAwsCustomResource(stack, jsii.String("EdgeUploadVersion"), &customresources.AwsCustomResourceProps{
		OnUpdate: &customresources.AwsSdkCall{
			Service:            jsii.String("Lambda"),
			Action:             jsii.String("GetAlias"),
			Region:             jsii.String(EdgeRegion),
			Parameters:         map[string]any{"FunctionName": s.EdgeUploadFunctionName(), "Name": EdgeUploadAlias},
			PhysicalResourceId: customresources.PhysicalResourceId_Of(jsii.String("edge-upload-" + hex.EncodeToString(sum[:8]))),
		},
		Policy: customresources.AwsCustomResourcePolicy_FromStatements(&[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("lambda:GetAlias"),
			Resources: jsii.Strings(fnArn, fnArn+":"+EdgeUploadAlias),
		})}),
		InstallLatestAwsSdk: jsii.Bool(false),
		LogGroup: awslogs.NewLogGroup(stack, jsii.String("edge-upload-version-logs"), &awslogs.LogGroupProps{
			Retention:     s.LogRetention,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		}),
	})
	return awslambda.Version_FromVersionArn(stack, jsii.String("EdgeUploadFunctionVersion"),
		jsii.String(fnArn+":"+*get.GetResponseField(jsii.String("FunctionVersion"))))
}

// newFront puts CloudFront in front of both APIs, on s.Domain (and
// s.Hostnames) with its certificate when set, else on the distribution's
// own name. Nothing is cached; every viewer header but Host reaches the
// origin (API Gateway needs its own Host; the WebSocket handshake needs
// the Sec-WebSocket-* headers). upload, when set, is the edge upload
// function's version: the /media/upload behaviour runs it.
func newFront(stack awscdk.Stack, s Settings, httpApi awsapigatewayv2.HttpApi, wsApi awsapigatewayv2.WebSocketApi, upload awslambda.IVersion) awscloudfront.Distribution {
	host := func(apiID *string) *string {
		return jsii.String(*apiID + ".execute-api." + *stack.Region() + "." + *stack.UrlSuffix())
	}
	origin := func(id string, apiID *string) awscloudfront.IOrigin {
		return awscloudfrontorigins.NewHttpOrigin(host(apiID), &awscloudfrontorigins.HttpOriginProps{
			OriginId:       jsii.String(id),
			ProtocolPolicy: awscloudfront.OriginProtocolPolicy_HTTPS_ONLY,
			// API Gateway integrations time out at 29-30 s.
			ReadTimeout: awscdk.Duration_Seconds(jsii.Number(30)),
		})
	}
	router := awscloudfront.NewFunction(stack, jsii.String("UpgradeRouter"), &awscloudfront.FunctionProps{
		Comment: jsii.String("buzz relay: WebSocket upgrades to the WebSocket API"),
		Runtime: awscloudfront.FunctionRuntime_JS_2_0(),
		Code:    awscloudfront.FunctionCode_FromInline(jsii.String(upgradeRouter)),
	})
	routed := &[]*awscloudfront.FunctionAssociation{{EventType: awscloudfront.FunctionEventType_VIEWER_REQUEST, Function: router}}
	behavior := func(o awscloudfront.IOrigin, fns *[]*awscloudfront.FunctionAssociation) *awscloudfront.BehaviorOptions {
		return &awscloudfront.BehaviorOptions{
			Origin:               o,
			AllowedMethods:       awscloudfront.AllowedMethods_ALLOW_ALL(),
			CachePolicy:          awscloudfront.CachePolicy_CACHING_DISABLED(),
			OriginRequestPolicy:  awscloudfront.OriginRequestPolicy_ALL_VIEWER_EXCEPT_HOST_HEADER(),
			ViewerProtocolPolicy: awscloudfront.ViewerProtocolPolicy_HTTPS_ONLY,
			FunctionAssociations: fns,
		}
	}
	httpOrigin, ws := origin(httpOriginID, httpApi.ApiId()), origin(wsOriginID, wsApi.ApiId())
	// wss://<host>/live reaches the stage directly, and the WebSocket
	// origin is part of the distribution for the router.
	behaviors := map[string]*awscloudfront.BehaviorOptions{"/" + WebSocketStageName: behavior(ws, nil)}
	if upload != nil {
		b := behavior(httpOrigin, routed)
		b.EdgeLambdas = &[]*awscloudfront.EdgeLambda{
			{EventType: awscloudfront.LambdaEdgeEventType_ORIGIN_REQUEST, FunctionVersion: upload},
			{EventType: awscloudfront.LambdaEdgeEventType_ORIGIN_RESPONSE, FunctionVersion: upload},
		}
		behaviors[UploadBehaviorPath] = b
	}
	props := &awscloudfront.DistributionProps{
		Comment:             jsii.String("buzz relay " + s.Community),
		PriceClass:          awscloudfront.PriceClass_PRICE_CLASS_100,
		DefaultBehavior:     behavior(httpOrigin, routed),
		AdditionalBehaviors: &behaviors,
	}
	if s.Domain != "" {
		props.Comment = jsii.String("buzz relay " + s.Community + " on " + s.Domain)
		props.DomainNames = jsii.Strings(append([]string{s.Domain}, s.Hostnames...)...)
		props.Certificate = awscertificatemanager.Certificate_FromCertificateArn(stack, jsii.String("EdgeCertificate"), jsii.String(s.CertificateArn))
	}
	return awscloudfront.NewDistribution(stack, jsii.String("Edge"), props)
}

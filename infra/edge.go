package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsbudgets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfrontorigins"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
)

// Origin ids of the distribution; the viewer-request function selects the
// WebSocket one by id.
const (
	httpOriginID = "http-api"
	wsOriginID   = "ws-api"
)

// upgradeRouter is the CloudFront Function (JavaScript runtime 2.0) that
// sends a WebSocket upgrade to the WebSocket API's stage and leaves every
// other request on the HTTP API, so NIP-11, /query and wss:// share one
// host. API Gateway will not map an HTTP and a WebSocket API to one custom
// domain; CloudFront can front both.
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

// newDistribution puts CloudFront on s.Domain in front of both APIs.
// Nothing is cached; every viewer header but Host reaches the origin
// (API Gateway needs its own Host; the WebSocket handshake needs the
// Sec-WebSocket-* headers).
func newDistribution(stack awscdk.Stack, s Settings, httpApi awsapigatewayv2.HttpApi, wsApi awsapigatewayv2.WebSocketApi) awscloudfront.Distribution {
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
	router := awscloudfront.NewFunction(stack, jsii.String("UpgradeRouter"), &awscloudfront.FunctionProps{
		Comment: jsii.String("buzz relay: WebSocket upgrades to the WebSocket API"),
		Runtime: awscloudfront.FunctionRuntime_JS_2_0(),
		Code:    awscloudfront.FunctionCode_FromInline(jsii.String(upgradeRouter)),
	})
	ws := origin(wsOriginID, wsApi.ApiId())
	return awscloudfront.NewDistribution(stack, jsii.String("Edge"), &awscloudfront.DistributionProps{
		Comment:     jsii.String("buzz relay " + s.Community + " on " + s.Domain),
		DomainNames: jsii.Strings(append([]string{s.Domain}, s.Hostnames...)...),
		Certificate: awscertificatemanager.Certificate_FromCertificateArn(stack, jsii.String("EdgeCertificate"), jsii.String(s.CertificateArn)),
		PriceClass:  awscloudfront.PriceClass_PRICE_CLASS_100,
		DefaultBehavior: behavior(origin(httpOriginID, httpApi.ApiId()), &[]*awscloudfront.FunctionAssociation{{
			EventType: awscloudfront.FunctionEventType_VIEWER_REQUEST,
			Function:  router,
		}}),
		// wss://<domain>/live reaches the stage directly, and the
		// WebSocket origin is part of the distribution for the router.
		AdditionalBehaviors: &map[string]*awscloudfront.BehaviorOptions{
			"/" + WebSocketStageName: behavior(ws, nil),
		},
	})
}

// newBudget is a monthly cost budget for the whole account (Budgets only
// filters by tags once they are activated as cost allocation tags) that
// notifies the alarm topic (and mails s.AlarmEmail, when set) at 80% of
// actual and 100% of forecast spend.
func newBudget(stack awscdk.Stack, s Settings, topic awssns.Topic) {
	subscribers := []*awsbudgets.CfnBudget_SubscriberProperty{{SubscriptionType: jsii.String("SNS"), Address: topic.TopicArn()}}
	if s.AlarmEmail != "" {
		subscribers = append(subscribers, &awsbudgets.CfnBudget_SubscriberProperty{SubscriptionType: jsii.String("EMAIL"), Address: jsii.String(s.AlarmEmail)})
	}
	notify := func(kind string, pct float64) *awsbudgets.CfnBudget_NotificationWithSubscribersProperty {
		return &awsbudgets.CfnBudget_NotificationWithSubscribersProperty{
			Notification: &awsbudgets.CfnBudget_NotificationProperty{
				NotificationType:   jsii.String(kind),
				ComparisonOperator: jsii.String("GREATER_THAN"),
				Threshold:          jsii.Number(pct),
				ThresholdType:      jsii.String("PERCENTAGE"),
			},
			Subscribers: &subscribers,
		}
	}
	awsbudgets.NewCfnBudget(stack, jsii.String("Budget"), &awsbudgets.CfnBudgetProps{
		Budget: &awsbudgets.CfnBudget_BudgetDataProperty{
			BudgetName:  jsii.String(s.StackName + "-" + *stack.Region()),
			BudgetType:  jsii.String("COST"),
			TimeUnit:    jsii.String("MONTHLY"),
			BudgetLimit: &awsbudgets.CfnBudget_SpendProperty{Amount: jsii.Number(s.BudgetUSD), Unit: jsii.String("USD")},
		},
		NotificationsWithSubscribers: &[]interface{}{notify("ACTUAL", 80), notify("FORECASTED", 100)},
	})
}

package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsrds"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// The alarms every profile has: they watch the bill and the one failure a
// user sees, cost $0.10 each a month, and notify the Alarms topic (which
// the budget notifies too). The managed profile adds the functions'
// errors and throttles (`alarms`).
const (
	// AlarmDBAwake: the cluster's capacity stayed above zero for whole
	// hours on more than DBAwakeHours of the last 24 (the wake that
	// costs money: something keeps Aurora from pausing).
	AlarmDBAwake = "db-awake-hours"
	// AlarmHTTP5xx: the HTTP API's 5xx in 5 minutes, less the 503s the
	// relay answers while Aurora resumes (a metric of their log lines).
	AlarmHTTP5xx = "http-5xx"
	// ResumingMetric is the count of 503 "database resuming" answers of
	// the HTTP functions (a metric filter on their log groups).
	ResumingMetric = "DatabaseResuming503"
	// ResumingPattern matches the line shared/domain/reject.Report logs
	// for every such answer (slog JSON, msg "<op>: database unavailable").
	ResumingPattern = `{ $.msg = "*: database unavailable" }`
	// HTTP5xxThreshold is how many non-resume 5xx in 5 minutes alarm.
	HTTP5xxThreshold = 5
)

// newAlarmTopic is the SNS topic every alarm and the budget notify;
// AlarmEmail, when set, is subscribed.
func newAlarmTopic(stack awscdk.Stack, s Settings) awssns.Topic {
	topic := awssns.NewTopic(stack, jsii.String("Alarms"), &awssns.TopicProps{
		DisplayName: jsii.String("buzz relay " + s.Community + " alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	if s.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(s.AlarmEmail), nil))
	}
	// AWS Budgets publishes the budget's notifications to it.
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("budgets.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  jsii.Strings(*topic.TopicArn()),
	}))
	return topic
}

// newCostAlarms adds the alarms of every profile: Aurora awake too long,
// and the HTTP API's 5xx without the resume 503s. httpLogs are the log
// groups of the functions on the HTTP routes.
func newCostAlarms(stack awscdk.Stack, s Settings, topic awssns.Topic, cluster awsrds.DatabaseCluster,
	httpApi awsapigatewayv2.HttpApi, httpLogs []awslogs.LogGroup) {
	action := awscloudwatchactions.NewSnsAction(topic)
	awake := cluster.MetricServerlessDatabaseCapacity(&awscloudwatch.MetricOptions{
		Period: awscdk.Duration_Hours(jsii.Number(1)), Statistic: jsii.String("Minimum"),
	}).CreateAlarm(stack, jsii.String(AlarmDBAwake), &awscloudwatch.CreateAlarmOptions{
		AlarmDescription: jsii.String(fmt.Sprintf("buzz relay: Aurora stayed awake (capacity above 0) for whole hours on more than %d of the last 24: "+
			"something keeps it from pausing (an open client, a monitor on /healthz?deep=1); see docs/deploy.md, Alarms", s.DBAwakeHours)),
		Threshold:          jsii.Number(0),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		EvaluationPeriods:  jsii.Number(24),
		DatapointsToAlarm:  jsii.Number(float64(s.DBAwakeHours + 1)),
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	awake.AddAlarmAction(action)

	namespace := "BuzzRelay/" + s.Slug()
	for i, lg := range httpLogs {
		lg.AddMetricFilter(jsii.String(fmt.Sprintf("resuming-503-%d", i+1)), &awslogs.MetricFilterOptions{
			FilterPattern:   awslogs.FilterPattern_Literal(jsii.String(ResumingPattern)),
			MetricNamespace: jsii.String(namespace),
			MetricName:      jsii.String(ResumingMetric),
			MetricValue:     jsii.String("1"),
		})
	}
	period := awscdk.Duration_Minutes(jsii.Number(5))
	errors := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("FILL(m5xx, 0) - FILL(resuming, 0)"),
		Label:      jsii.String("HTTP 5xx less the 503s of a resuming database"),
		Period:     period,
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"m5xx":     httpApi.MetricServerError(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
			"resuming": awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(namespace), MetricName: jsii.String(ResumingMetric), Period: period, Statistic: jsii.String("Sum")}),
		},
	})
	errors.CreateAlarm(stack, jsii.String(AlarmHTTP5xx), &awscloudwatch.CreateAlarmOptions{
		AlarmDescription:   jsii.String(fmt.Sprintf("buzz relay HTTP API: %d or more 5xx in 5 minutes that are not the 503 of a resuming database", HTTP5xxThreshold)),
		Threshold:          jsii.Number(HTTP5xxThreshold),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	}).AddAlarmAction(action)
}

// httpFunctions are the functions some HTTP route reaches.
func httpFunctions() map[string]bool {
	out := map[string]bool{}
	for _, r := range append(append([]lambdas.HTTPRoute(nil), lambdas.HTTPRoutes...), lambdas.MediaRoutes...) {
		out[r.Function] = true
	}
	return out
}

package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// The push sender (functions/push-sender, docs/push.md): Lambda runs a
// failed batch again PushRetryAttempts times (its runs fail while
// deliveries are still due later), within PushMaxEventAgeMinutes, then
// hands the batch's event to the PushFailed queue (kept 14 days). Nothing
// polls the queue: idle, it costs nothing. Its alarm (AlarmPushFailed,
// $0.10 a month) tells the operator when a delivery was given up: a
// receiver that never answers, or callbacks this deployment cannot reach.
const (
	PushRetryAttempts       = 2
	PushMaxEventAgeMinutes  = 60
	PushFailedRetentionDays = 14
	pushFailedQueueID       = "PushFailed"
	// AlarmPushFailed: a message reached the PushFailed queue.
	AlarmPushFailed = "push-failed"
)

// outsideVPC takes the push dialer (functions/push-dialer) out of the VPC:
// it makes the sender's requests to callbacks and the push gateway from
// Lambda's own network, which reaches the internet (IPv4 at least) without
// a NAT, and needs nothing in the VPC (no database, key or secret). The
// sender stays in the VPC beside the database and reaches it through
// Lambda's Invoke API (lambda.{region}.api.aws over egress=ipv6).
func outsideVPC(props *awslambda.FunctionProps) {
	props.Vpc, props.VpcSubnets, props.SecurityGroups = nil, nil, nil
}

// pushFailures configures the push sender's asynchronous retries and its
// on-failure queue on props, with the queue's alarm on topic.
func pushFailures(stack awscdk.Stack, props *awslambda.FunctionProps, topic awssns.ITopic) {
	q := awssqs.NewQueue(stack, jsii.String(pushFailedQueueID), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(PushFailedRetentionDays)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	props.RetryAttempts = jsii.Number(PushRetryAttempts)
	props.MaxEventAge = awscdk.Duration_Minutes(jsii.Number(PushMaxEventAgeMinutes))
	props.OnFailure = awslambdadestinations.NewSqsDestination(q)
	q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
		Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Maximum"),
	}).CreateAlarm(stack, jsii.String(AlarmPushFailed), &awscloudwatch.CreateAlarmOptions{
		AlarmDescription: jsii.String("buzz relay push: a delivery was given up after its retries (queue PushFailed); " +
			"see docs/push.md, When a delivery fails"),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	}).AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
}

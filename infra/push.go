package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// The push sender (functions/push-sender, docs/push.md): Lambda runs a
// failed batch again PushRetryAttempts times (its runs fail while
// deliveries are still due later), within PushMaxEventAgeMinutes, then
// hands the batch's event to the PushFailed queue, whose first message
// raises an alarm (managed profile). Nothing polls the queue: idle, it
// costs nothing.
const (
	PushRetryAttempts         = 2
	PushMaxEventAgeMinutes    = 60
	PushFailedRetentionDays   = 14
	PushFailedAlarmThreshold  = 1
	pushFailedQueueID         = "PushFailed"
	pushFailedAlarmID         = "push-sender-failed-batches"
	pushFailedAlarmDescriptor = "buzz relay push-sender: batches Lambda gave up on (PushFailed queue)"
)

// pushFailures configures the push sender's asynchronous retries and its
// on-failure queue on props; alarm is the stack's alarm helper.
func pushFailures(stack awscdk.Stack, props *awslambda.FunctionProps, alarm func(awscloudwatch.Metric, string, string, float64)) {
	q := awssqs.NewQueue(stack, jsii.String(pushFailedQueueID), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(PushFailedRetentionDays)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
	})
	props.RetryAttempts = jsii.Number(PushRetryAttempts)
	props.MaxEventAge = awscdk.Duration_Minutes(jsii.Number(PushMaxEventAgeMinutes))
	props.OnFailure = awslambdadestinations.NewSqsDestination(q)
	alarm(q.MetricApproximateNumberOfMessagesVisible(nil), pushFailedAlarmID, pushFailedAlarmDescriptor, PushFailedAlarmThreshold)
}

package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// The push sender (functions/push-sender, docs/push.md): Lambda runs a
// failed batch again PushRetryAttempts times (its runs fail while
// deliveries are still due later), within PushMaxEventAgeMinutes, then
// hands the batch's event to the PushFailed queue (kept 14 days, its
// ApproximateNumberOfMessagesVisible metric in CloudWatch; no alarm, which
// would add $0.10 a month to the idle bill). Nothing polls the queue: idle,
// it costs nothing.
const (
	PushRetryAttempts       = 2
	PushMaxEventAgeMinutes  = 60
	PushFailedRetentionDays = 14
	pushFailedQueueID       = "PushFailed"
)

// pushFailures configures the push sender's asynchronous retries and its
// on-failure queue on props.
func pushFailures(stack awscdk.Stack, props *awslambda.FunctionProps) {
	q := awssqs.NewQueue(stack, jsii.String(pushFailedQueueID), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(PushFailedRetentionDays)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
	})
	props.RetryAttempts = jsii.Number(PushRetryAttempts)
	props.MaxEventAge = awscdk.Duration_Minutes(jsii.Number(PushMaxEventAgeMinutes))
	props.OnFailure = awslambdadestinations.NewSqsDestination(q)
}

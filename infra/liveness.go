package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// The liveness schedule (lambdas.LivenessRateMinutes and
// LivenessDelaySeconds; docs/architecture.md, "Greeting and liveness"):
// every open connection gets a frame at least every 50 s while idle, and
// nothing in AWS fires a function more often than once a minute. So one
// EventBridge rule, every minute, invokes the push function directly and
// sends the same tick to a queue whose delivery delay holds it back 30 s,
// from which an event source mapping invokes the function again: two ticks
// a minute, 30 s apart, without a function waiting out the half minute
// (billed by the second) or a timer of its own. A tick is worth nothing
// once the next one is due: no retries, and the queue keeps a message a
// minute at most.
//
// The open connections the tick posts to are the sessions' table's
// (SESSION_TABLE, sessions.go).
const (
	LivenessQueueRetentionSeconds = 60
	// LivenessQueueVisibilitySeconds is above the push function's timeout,
	// as an event source mapping requires.
	LivenessQueueVisibilitySeconds = 60
	// LivenessPollers is the mapping's most concurrent invocations (the
	// least it allows): a tick is one message.
	LivenessPollers = 2
)

// newLiveness schedules fn, the push function.
func newLiveness(stack awscdk.Stack, fn awslambda.Function) {
	queue := awssqs.NewQueue(stack, jsii.String("LivenessDelay"), &awssqs.QueueProps{
		DeliveryDelay:     awscdk.Duration_Seconds(jsii.Number(lambdas.LivenessDelaySeconds)),
		RetentionPeriod:   awscdk.Duration_Seconds(jsii.Number(LivenessQueueRetentionSeconds)),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(LivenessQueueVisibilitySeconds)),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
	})
	awsevents.NewRule(stack, jsii.String("LivenessSchedule"), &awsevents.RuleProps{
		Description: jsii.String("buzz relay liveness: the push function's tick now, and through LivenessDelay 30 s later"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(lambdas.LivenessRateMinutes))),
		Targets: &[]awsevents.IRuleTarget{
			awseventstargets.NewLambdaFunction(fn, &awseventstargets.LambdaFunctionProps{
				RetryAttempts: jsii.Number(0), MaxEventAge: awscdk.Duration_Minutes(jsii.Number(1)),
			}),
			awseventstargets.NewSqsQueue(queue, &awseventstargets.SqsQueueProps{
				RetryAttempts: jsii.Number(0), MaxEventAge: awscdk.Duration_Minutes(jsii.Number(1)),
			}),
		},
	})
	fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:      jsii.Number(10),
		MaxConcurrency: jsii.Number(LivenessPollers),
	}))
}

package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsschedulertargets"
	"github.com/aws/jsii-runtime-go"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// newExpirySweep schedules fn, the NIP-40 expiry sweep
// (functions/expiry-sweep), with EventBridge Scheduler every
// lambdas.SweepRateHours: the one schedule that reaches the database, so
// once a day (a paused Aurora resumes for it). Reads never serve an
// expired event, so a sweep that fails or is late only keeps rows longer:
// no retries.
func newExpirySweep(stack awscdk.Stack, fn awslambda.Function) {
	awsscheduler.NewSchedule(stack, jsii.String("ExpirySweepSchedule"), &awsscheduler.ScheduleProps{
		Description: jsii.String("buzz relay NIP-40: delete the events whose expiration has passed"),
		Schedule:    awsscheduler.ScheduleExpression_Rate(awscdk.Duration_Hours(jsii.Number(lambdas.SweepRateHours))),
		Target: awsschedulertargets.NewLambdaInvoke(fn, &awsschedulertargets.ScheduleTargetBaseProps{
			RetryAttempts: jsii.Number(0),
			MaxEventAge:   awscdk.Duration_Hours(jsii.Number(1)),
		}),
	})
}

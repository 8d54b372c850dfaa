package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/jsii-runtime-go"
)

// Buzz's workflows (docs/workflows.md): the workflow runner keeps one
// EventBridge Scheduler schedule per schedule workflow (created when the
// workflow is saved, deleted with it or when it is disabled) and a
// one-time at() schedule per wait (a delay, an approval's expiry, deleted
// by the Scheduler once it fired), all in one group of this stack, whose
// deletion with the stack deletes them all. The schedules invoke the
// runner with a role of their own that may invoke the runner and nothing
// else; the runner may write and delete schedules in that group only and
// pass that role to the Scheduler only.

// workflowSchedules are the group and the schedules' role.
type workflowSchedules struct {
	group awsscheduler.ScheduleGroup
	role  awsiam.Role
}

// newWorkflowSchedules makes the runner's schedule group and the role its
// schedules invoke it with (assumable by the Scheduler for this account
// only).
func newWorkflowSchedules(stack awscdk.Stack) workflowSchedules {
	group := awsscheduler.NewScheduleGroup(stack, jsii.String("WorkflowSchedules"), &awsscheduler.ScheduleGroupProps{
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	role := awsiam.NewRole(stack, jsii.String("WorkflowSchedulerRole"), &awsiam.RoleProps{
		Description: jsii.String("buzz relay workflows: EventBridge Scheduler invokes the workflow runner"),
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("scheduler.amazonaws.com"), &awsiam.ServicePrincipalOpts{
			Conditions: &map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()}},
		}),
	})
	return workflowSchedules{group: group, role: role}
}

// grant gives the schedules' role the runner's Invoke (a policy of its
// own: the runner's environment names the role, so the role itself must
// not depend on the runner) and the runner its schedules: create, update
// and delete in the group, the role passed to the Scheduler only, and its
// own Invoke (a long run goes on in its next invocation).
func (w workflowSchedules) grant(stack awscdk.Stack, fn awslambda.Function) {
	awsiam.NewPolicy(stack, jsii.String("workflow-scheduler-invokes-runner"), &awsiam.PolicyProps{
		Roles: &[]awsiam.IRole{w.role},
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("InvokeWorkflowRunner"),
			Actions:   jsii.Strings("lambda:InvokeFunction"),
			Resources: jsii.Strings(*fn.FunctionArn()),
		})},
	})
	w.group.GrantWriteSchedules(fn)
	w.group.GrantDeleteSchedules(fn)
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("PassSchedulerRole"),
		Actions:    jsii.Strings("iam:PassRole"),
		Resources:  jsii.Strings(*w.role.RoleArn()),
		Conditions: &map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "scheduler.amazonaws.com"}},
	}))
	awsiam.NewPolicy(stack, jsii.String("workflow-runner-invokes-itself"), &awsiam.PolicyProps{
		Roles: &[]awsiam.IRole{fn.Role()},
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("InvokeNextPart"),
			Actions:   jsii.Strings("lambda:InvokeFunction"),
			Resources: jsii.Strings(*fn.FunctionArn()),
		})},
	})
}

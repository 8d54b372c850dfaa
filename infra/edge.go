package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsbudgets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
)

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

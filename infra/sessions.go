package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// The WebSocket sessions (shared/domain/session.Store) live in one
// DynamoDB table (shared/aws/ddbsessions: its items and key design), so
// that a session's life (connect, AUTH, REQ for what a client has seen or
// limit 0, CLOSE, $disconnect, the liveness tick) runs no Aurora statement
// and Aurora can pause under open apps:
//
//   - on demand (pay per request, nothing billed idle);
//   - keys pk and sk (strings), TTL on ttl (a connection's items expire
//     with it; readers skip expired items until DynamoDB deletes them);
//   - no point-in-time recovery: every item lives at most two hours (API
//     Gateway's connection lifetime) and a lost table only makes clients
//     reconnect and subscribe again, so backups would bill for nothing;
//   - deleted with the stack (RemovalPolicy DESTROY) for the same reason.
const (
	SessionPK, SessionSK, SessionTTL = "pk", "sk", "ttl"
)

// SessionActions are the table actions a session function is granted:
// single items, batches and queries of one partition; never a scan, and
// never the table's own management.
var SessionActions = []string{
	"dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem",
	"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem",
}

// SessionFunctions names the functions that use the table
// (lambdas.Function.Sessions), for the stack and its tests.
var SessionFunctions = func() map[string]bool {
	out := map[string]bool{}
	for _, f := range Functions {
		if f.Sessions {
			out[f.Name] = true
		}
	}
	return out
}()

// newSessionTable is the sessions' table.
func newSessionTable(stack awscdk.Stack) awsdynamodb.Table {
	return awsdynamodb.NewTable(stack, jsii.String("Sessions"), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String(SessionPK), Type: awsdynamodb.AttributeType_STRING},
		SortKey:             &awsdynamodb.Attribute{Name: jsii.String(SessionSK), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String(SessionTTL),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(false),
		},
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
}

// grantSessions lets a session function use the table (SessionActions).
func grantSessions(table awsdynamodb.Table, add func(awsiam.PolicyStatement)) {
	add(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("SessionTable"),
		Actions:   jsii.Strings(SessionActions...),
		Resources: jsii.Strings(*table.TableArn()),
	}))
}

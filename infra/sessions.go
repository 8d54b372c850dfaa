package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"
)

// The WebSocket sessions' idle state (shared/service/sessions.Idle) lives
// in the media bucket under SessionPrefix, so an open app does not keep
// Aurora awake: a connection's AUTH key, each community's last-commit
// mark, subscriptions pending their fold and $disconnect marks. With media
// off there is no bucket and SESSION_BUCKET is unset: sessions live in the
// database as before.
//
// SessionPrefix is SESSION_PREFIX's default (shared/wiring/config).
const SessionPrefix = "sessions/"

// SessionExpiring are the parts of that state the bucket's lifecycle
// deletes SessionExpireDays after they were written, should no write or
// $disconnect have (sessions.ConnDir and sessions.FoldDir: a connection's
// AUTH state, the subscriptions pending their community's next write and
// the $disconnect marks; a connection lives two hours). The communities'
// last-commit marks (c/) are kept: without one the next REQ wakes the
// database.
var SessionExpiring = []string{"conn/", "fold/"}

// SessionExpireDays is how long a session object may outlive its
// connection (S3 expires in whole days).
const SessionExpireDays = 1

// SessionFunctions names the functions that keep that state
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

// grantSessions lets a session function get, put and delete the objects
// under SessionPrefix and list that prefix only.
func grantSessions(bucket awss3.Bucket, add func(awsiam.PolicyStatement)) {
	add(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("SessionState"),
		Actions:   jsii.Strings("s3:DeleteObject", "s3:GetObject", "s3:PutObject"),
		Resources: jsii.Strings(*bucket.ArnForObjects(jsii.String(SessionPrefix + "*"))),
	}))
	add(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("SessionList"),
		Actions:    jsii.Strings("s3:ListBucket"),
		Resources:  jsii.Strings(*bucket.BucketArn()),
		Conditions: &map[string]any{"StringLike": map[string]any{"s3:prefix": SessionPrefix + "*"}},
	}))
}

package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"
)

// DirectoryPrefix is DIRECTORY_PREFIX's default (shared/wiring/config):
// what each host serves (shared/service/directory), in the media bucket,
// read by NIP-11 and a new WebSocket connection's host instead of the
// database and rewritten by every change of a community.
const DirectoryPrefix = "directory/"

// grantDirectory lets a function read and write the directory's
// documents, and list their prefix: without s3:ListBucket S3 answers a
// missing document 403 instead of 404, and a missing document is one the
// relay reads from the database once and writes.
func grantDirectory(bucket awss3.Bucket, add func(awsiam.PolicyStatement)) {
	add(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("Directory"),
		Actions:   jsii.Strings("s3:GetObject", "s3:PutObject"),
		Resources: jsii.Strings(*bucket.ArnForObjects(jsii.String(DirectoryPrefix + "*"))),
	}))
	add(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("DirectoryList"),
		Actions:    jsii.Strings("s3:ListBucket"),
		Resources:  jsii.Strings(*bucket.BucketArn()),
		Conditions: &map[string]any{"StringLike": map[string]any{"s3:prefix": DirectoryPrefix + "*"}},
	}))
}

package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// checkWithNag runs cdk-nag's AWS Solutions pack over the stack at every
// synth (make synth, make deploy and the tests): an unsuppressed finding is
// an error, which fails the synth. What this design accepts is suppressed
// below, each with its reason; the findings it did not accept were fixed
// in the template instead (TLS-only topic and queues). TestNagFindsNothingUnsuppressed
// holds both profiles to zero.
func checkWithNag(stack awscdk.Stack, s Settings) {
	awscdk.Aspects_Of(stack).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	sup := []*cdknag.NagPackSuppression{
		{Id: jsii.String("AwsSolutions-APIG1"), Reason: jsii.String(
			"API Gateway access logs are off: every function logs each request it serves (slog JSON), and access logs would double the log ingestion a small community pays for per request.")},
		{Id: jsii.String("AwsSolutions-APIG4"), Reason: jsii.String(
			"The relay authenticates every request itself, by nostr's own schemes (NIP-42 AUTH on the WebSocket, NIP-98 and Blossom 24242 events over HTTP, checked in the functions by the one door guard); NIP-11, invite pages and public media are public by protocol.")},
		{Id: jsii.String("AwsSolutions-IAM4"), Reason: jsii.String(
			"The functions' roles use AWS's managed AWSLambdaBasicExecutionRole (their own log streams) and AWSLambdaVPCAccessExecutionRole (ENIs in the VPC), which CDK attaches; every grant to the relay's own resources is an inline statement scoped to that resource.")},
		{Id: jsii.String("AwsSolutions-IAM5"), Reason: jsii.String(
			"Wildcards are in resource paths under one named resource only: @connections/* of this API's stage, the objects under the media bucket's prefixes, the versions of one function (arn:...:function:name:*) that Invoke and the scheduler grant, and the custom-resource providers CDK generates.")},
		{Id: jsii.String("AwsSolutions-DDB3"), Reason: jsii.String(
			"The sessions table holds only live WebSocket sessions (2-hour TTL); after a loss clients reconnect and re-subscribe, as after a redeploy. Point-in-time recovery would bill for state nobody restores.")},
		{Id: jsii.String("AwsSolutions-S1"), Reason: jsii.String(
			"Server access logs need a second bucket and bill per request; the relay records every upload and deletion with its key in the database (blob rows and the audit log).")},
		{Id: jsii.String("AwsSolutions-SMG4"), Reason: jsii.String(
			"The Aurora master secret is read only by the migrate custom resource at deploy time (the request functions connect with IAM database auth); rotating it needs a rotation function with a Secrets Manager endpoint in the VPC, an idle cost this deployment avoids.")},
		{Id: jsii.String("AwsSolutions-VPC7"), Reason: jsii.String(
			"VPC flow logs bill per GB ingested; the VPC holds only the functions and the database, with no ingress from the internet.")},
		{Id: jsii.String("AwsSolutions-CFR1"), Reason: jsii.String(
			"A relay serves its community wherever its members are: the CloudFront front restricts no country.")},
		{Id: jsii.String("AwsSolutions-CFR2"), Reason: jsii.String(
			"AWS WAF bills $5 a month per web ACL plus per rule, more than an idle community's whole bill; the relay rate-limits per key and per connection itself, and API Gateway's stage throttles stay in force behind CloudFront.")},
		{Id: jsii.String("AwsSolutions-CFR3"), Reason: jsii.String(
			"CloudFront access logs need a logging bucket and bill per request; the functions log every request they serve.")},
		{Id: jsii.String("AwsSolutions-SQS3"), Reason: jsii.String(
			"PushFailed is itself the push sender's dead-letter destination (with an alarm), and LivenessDelay carries liveness ticks that are worthless once late: a dead-letter queue would only keep stale ticks.")},
	}
	if s.GIFs {
		// One reason per finding id: the GIF proxy's secret joins the
		// master secret's.
		for _, x := range sup {
			if *x.Id == "AwsSolutions-SMG4" {
				x.Reason = jsii.String(*x.Reason + " The KLIPY secret (-c gifs) holds a key KLIPY issues: no rotation function can mint one; it is replaced by deploying a new KlipyApiKey.")
			}
		}
	}
	if s.Egress == "nat-instance" {
		sup = append(sup,
			&cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-EC26"), Reason: jsii.String(
				"The NAT instance (egress=nat-instance) keeps no data: its root volume holds the stock image only.")},
			&cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-EC28"), Reason: jsii.String(
				"Detailed monitoring bills per metric; the NAT instance's basic 5-minute metrics and its status-check alarm suffice for a t4g.nano that only forwards.")},
			&cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-EC29"), Reason: jsii.String(
				"The NAT instance is disposable (replaced by a deploy); termination protection would block make destroy.")},
			&cdknag.NagPackSuppression{Id: jsii.String("CdkNagValidationFailure"), Reason: jsii.String(
				"AwsSolutions-EC23 cannot evaluate the NAT instance's ingress rule, whose source is the VPC's CIDR (an intrinsic): it admits the VPC only, never 0.0.0.0/0.")})
	}
	if s.Domain == "" {
		sup = append(sup, &cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-CFR4"), Reason: jsii.String(
			"Without -c domain the distribution serves on its own *.cloudfront.net name with CloudFront's default certificate, whose TLS policy CloudFront sets and no stack can raise; with -c domain and an ACM certificate the viewer policy is TLSv1.2_2021.")})
	}
	if s.DBAuth != "iam" {
		sup = append(sup, &cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-RDS6"), Reason: jsii.String(
			"dbAuth=secret is the operator's explicit choice (the functions read the master secret instead of IAM database auth); the default, dbAuth=iam, turns IAM authentication on.")})
	}
	if !s.KeyRotation {
		sup = append(sup, &cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-KMS5"), Reason: jsii.String(
			"The community profile leaves key rotation off: each of the first two rotations adds $1 a month to an idle bill of about $2; the managed profile (keyRotation) turns it on.")})
	}
	if !s.DeletionProtection {
		sup = append(sup, &cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-RDS10"), Reason: jsii.String(
			"The community profile lets make destroy delete the cluster, which leaves a final snapshot with its key and secret retained; the managed profile (deletionProtection) turns protection on.")})
	}
	cdknag.NagSuppressions_AddStackSuppressions(stack, &sup, jsii.Bool(true))
}

package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsrds"
	"github.com/aws/jsii-runtime-go"
)

// Restoring a database goes through the stack, never around it: the
// cluster's SnapshotIdentifier is the CloudFormation parameter
// DbRestoreSnapshot (empty: a new, empty cluster, as before). Setting it
// on a live stack replaces the cluster: CloudFormation creates the
// restored one, points every reference at it (the functions' DB_HOST,
// the rds-db:connect grant on its resource id, the secret's host, the
// migrate resource, which then runs against it) and deletes the old one,
// which leaves its final snapshot (community) or stays (managed,
// retainData). Setting it on a new stack after `make destroy` (with
// -c relayKmsKey naming the retained key) brings the community back.
// localdev/restore drives both and checks the template first.
//
// Why a parameter and not a context value: CloudFormation restores from
// SnapshotIdentifier once, and an update that drops it replaces the
// restored cluster with an empty one (the AWS::RDS::DBCluster page,
// SnapshotIdentifier). cdk deploy reuses a parameter's previous value
// unless told otherwise (--previous-parameters, default true), so every
// later `make deploy` keeps it; a context value would have to be repeated
// on every deploy, and one forgotten -c would empty the database.
const (
	RestoreParameter = "DbRestoreSnapshot"
	RestoreCondition = "Restoring"
)

type restoreParameter struct {
	param awscdk.CfnParameter
}

func newRestoreParameter(stack awscdk.Stack) restoreParameter {
	p := awscdk.NewCfnParameter(stack, jsii.String(RestoreParameter), &awscdk.CfnParameterProps{
		Type:    jsii.String("String"),
		Default: jsii.String(""),
		// A snapshot's name (this account and region) or its ARN.
		AllowedPattern: jsii.String(`^$|^[A-Za-z][A-Za-z0-9-]{0,254}$|^arn:aws[a-z-]*:rds:[a-z0-9-]+:[0-9]{12}:cluster-snapshot:[A-Za-z][A-Za-z0-9:-]{0,254}$`),
		Description: jsii.String("Aurora cluster snapshot the database is restored from (make restore). Empty: a new cluster. " +
			"Once set, keep it: later deploys reuse it; clearing it replaces the database with an empty one"),
	})
	awscdk.NewCfnCondition(stack, jsii.String(RestoreCondition), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.ValueAsString(), jsii.String(""))),
	})
	return restoreParameter{param: p}
}

// apply makes the cluster restore from the parameter's snapshot when it is
// set. As CDK's DatabaseClusterFromSnapshot renders it: SnapshotIdentifier
// and no MasterUsername (a snapshot keeps its master user, buzz); the
// master password stays the stack secret's, which CloudFormation sets on
// the restored cluster, so the secret (and migrate, which reads it) opens
// it.
func (r restoreParameter) apply(cluster awsrds.DatabaseCluster) {
	cfn := cluster.Node().DefaultChild().(awsrds.CfnDBCluster)
	cfn.AddPropertyOverride(jsii.String("SnapshotIdentifier"),
		awscdk.Fn_ConditionIf(jsii.String(RestoreCondition), r.param.ValueAsString(), awscdk.Aws_NO_VALUE()))
	cfn.AddPropertyOverride(jsii.String("MasterUsername"),
		awscdk.Fn_ConditionIf(jsii.String(RestoreCondition), awscdk.Aws_NO_VALUE(), cfn.MasterUsername()))
	// The template validator reads both branches of the Fn::If as if
	// both were set; under Restoring MasterUsername is AWS::NoValue.
	awscdk.Validations_Of(cfn).Acknowledge(&awscdk.Acknowledgment{Id: jsii.String("CloudFormation-Validate::W3688"),
		Reason: jsii.String("MasterUsername is AWS::NoValue whenever SnapshotIdentifier is set (both are Fn::If on Restoring)")})
}

// migrateProperties adds the database the migrate resource runs against:
// a restore replaces the cluster, its endpoint changes, and migrate runs
// again on the restored data (a snapshot older than this release is
// migrated before any handler serves it).
func migrateProperties(p map[string]any, cluster awsrds.DatabaseCluster) map[string]any {
	p["DatabaseHost"] = *cluster.ClusterEndpoint().Hostname()
	return p
}

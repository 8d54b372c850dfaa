package model

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Kept is one resource a deleted stack leaves behind (CloudFormation's
// DeletionPolicy Retain, RetainExceptOnCreate or Snapshot), with what it
// costs a month and the command that removes it. `make destroy` prints
// them (localdev/retained).
type Kept struct {
	LogicalID, Type string
	// What it is and why it stays.
	What string
	// MonthlyUSD at the given sizes (Sizes), list prices of p.
	MonthlyUSD float64
	// Remove is the shell command (with a lookup for the physical id the
	// deleted stack no longer names) that deletes it for good.
	Remove string
}

// Sizes are what the kept data weighs: the database (its snapshot or the
// retained cluster) and the media bucket, in GB.
type Sizes struct{ DatabaseGB, MediaGB float64 }

type keptTemplate struct {
	Resources map[string]struct {
		Type           string         `json:"Type"`
		DeletionPolicy string         `json:"DeletionPolicy"`
		Properties     map[string]any `json:"Properties"`
	} `json:"Resources"`
}

// Retained lists what deleting the stack of template b (JSON, as cdk
// synth writes it; stack is its name) leaves behind, by logical id.
func Retained(b []byte, stack string, z Sizes, p Prices) ([]Kept, error) {
	var t keptTemplate
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	lower := strings.ToLower(stack)
	var out []Kept
	for id, r := range t.Resources {
		policy := r.DeletionPolicy
		keeps := policy == "Retain" || policy == "RetainExceptOnCreate"
		k := Kept{LogicalID: id, Type: r.Type}
		switch {
		case r.Type == "AWS::RDS::DBCluster" && policy == "Snapshot":
			k.What = "Aurora cluster's final snapshot (the database as it was at deletion)"
			k.MonthlyUSD = z.DatabaseGB * p.SnapshotGBMonth
			k.Remove = fmt.Sprintf("aws rds describe-db-cluster-snapshots --snapshot-type manual --query \"DBClusterSnapshots[?starts_with(DBClusterSnapshotIdentifier, '%s')].DBClusterSnapshotIdentifier\" --output text"+
				" | xargs -n1 aws rds delete-db-cluster-snapshot --db-cluster-snapshot-identifier", lower)
		case r.Type == "AWS::RDS::DBCluster" && keeps:
			k.What = "Aurora cluster (retained with its data; paused, it bills storage only)"
			k.MonthlyUSD = z.DatabaseGB * p.StorageGBMonth
			k.Remove = fmt.Sprintf("C=$(aws rds describe-db-clusters --query \"DBClusters[?starts_with(DBClusterIdentifier, '%s')].DBClusterIdentifier\" --output text);"+
				" aws rds modify-db-cluster --db-cluster-identifier $C --no-deletion-protection --apply-immediately;"+
				" for i in $(aws rds describe-db-clusters --db-cluster-identifier $C --query 'DBClusters[0].DBClusterMembers[].DBInstanceIdentifier' --output text); do aws rds delete-db-instance --db-instance-identifier $i; done;"+
				" aws rds delete-db-cluster --db-cluster-identifier $C --final-db-snapshot-identifier $C-final   # or --skip-final-snapshot", lower)
		case r.Type == "AWS::RDS::DBInstance" && keeps:
			k.What = "Aurora writer instance (db.serverless, paused: no compute bill; deleted with its cluster above)"
		case r.Type == "AWS::KMS::Key" && keeps:
			k.What = "KMS key of the relay key (without it the stored relay key cannot be decrypted: keep it as long as the database or its snapshot)"
			k.MonthlyUSD = p.KMSKeyMonth
			if r.Properties["EnableKeyRotation"] == true {
				k.MonthlyUSD += 2 * p.KMSRotationMonth
			}
			k.Remove = tagged(stack, "kms:key") + " | xargs -n1 aws kms schedule-key-deletion --pending-window-in-days 7 --key-id"
		case r.Type == "AWS::SecretsManager::Secret" && keeps:
			k.What = "Aurora master secret (the master user's password of the retained cluster or its snapshot)"
			k.MonthlyUSD = p.SecretMonth
			k.Remove = tagged(stack, "secretsmanager:secret") + " | xargs -n1 aws secretsmanager delete-secret --recovery-window-in-days 7 --secret-id"
		case r.Type == "AWS::S3::Bucket" && keeps:
			k.What = "media bucket (members' blobs; CloudFormation cannot delete a bucket that holds objects)"
			k.MonthlyUSD = z.MediaGB * p.S3GBMonth
			k.Remove = fmt.Sprintf("aws s3 ls | awk '{print $3}' | grep '^%s-media' | xargs -I{} aws s3 rb s3://{} --force", lower)
		case r.Type == "AWS::Lambda::Version":
			// CDK retains a function's current version (the edge upload
			// function's, infra/front.go) so a running distribution keeps
			// it during an update; it goes with its function.
			continue
		case keeps:
			k.What = "retained by its DeletionPolicy"
			k.Remove = "(see the AWS console)"
		default:
			continue
		}
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type+out[i].LogicalID < out[j].Type+out[j].LogicalID })
	return out, nil
}

// tagged is the command that prints the ARNs of the deleted stack's
// resources of typ (resourcegroupstaggingapi's filter): CloudFormation
// tags every resource with its stack's name, and a retained one keeps it.
func tagged(stack, typ string) string {
	return fmt.Sprintf("aws resourcegroupstaggingapi get-resources --tag-filters Key=aws:cloudformation:stack-name,Values=%s"+
		" --resource-type-filters %s --query 'ResourceTagMappingList[].ResourceARN' --output text", stack, typ)
}

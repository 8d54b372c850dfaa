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
// retained cluster), the media bucket and the log groups no template
// holds (LogsGB, all of them together), in GB.
type Sizes struct{ DatabaseGB, MediaGB, LogsGB float64 }

// LogGroupsOutsideTemplate is the Kept.Type of the log groups Lambda makes
// for functions the template gives no log group, and Lambda@Edge's.
const LogGroupsOutsideTemplate = "AWS::Logs::LogGroup (made by Lambda, not in the template)"

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
	var ungrouped []string // functions whose log group Lambda makes
	for id, r := range t.Resources {
		if r.Type == "AWS::Lambda::Function" {
			name, _ := r.Properties["FunctionName"].(string)
			if strings.HasSuffix(stack, "-edge") && name != "" {
				// Lambda@Edge logs where it ran: a group per region, made
				// by the service, never by the stack.
				out = append(out, Kept{LogicalID: id, Type: LogGroupsOutsideTemplate,
					What:       "Lambda@Edge logs of " + name + ": /aws/lambda/us-east-1." + name + " in every region whose edge locations ran it, made by Lambda@Edge and kept without expiry",
					MonthlyUSD: z.LogsGB * p.LogsStoredGBMonth,
					Remove: fmt.Sprintf("for r in $(aws ec2 describe-regions --query 'Regions[].RegionName' --output text); do"+
						" aws logs delete-log-group --region $r --log-group-name /aws/lambda/us-east-1.%s 2>/dev/null; done", name)})
				continue
			}
			if lc, _ := r.Properties["LoggingConfig"].(map[string]any); lc["LogGroup"] == nil {
				ungrouped = append(ungrouped, id)
			}
			continue
		}
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
			k.What = "KMS key of the relay keys (without it the relay keys and push secrets stored in the database cannot be opened: keep it as long as the database or its snapshot; make restore brings them back with -c relayKmsKey=<its ARN>)"
			k.MonthlyUSD = p.KMSKeyMonth
			if r.Properties["EnableKeyRotation"] == true {
				k.MonthlyUSD += 2 * p.KMSRotationMonth
			}
			k.Remove = tagged(stack, "kms:key") + " | xargs -n1 aws kms schedule-key-deletion --pending-window-in-days 7 --key-id"
		case r.Type == "AWS::SecretsManager::Secret" && keeps:
			k.What = "Aurora master secret (the master user's password of the retained cluster or its snapshot; make restore sets the new stack's own secret on the restored cluster, so this one is needed only to open the old cluster or snapshot by hand)"
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
	if len(ungrouped) > 0 {
		sort.Strings(ungrouped)
		out = append(out, Kept{LogicalID: strings.Join(ungrouped, ","), Type: LogGroupsOutsideTemplate,
			What: fmt.Sprintf("log groups /aws/lambda/%s-… of %d function(s) the template gives none (CDK's custom-resource handlers: %s): Lambda makes them at the first run, they keep logs without expiry, and deleting the stack leaves them",
				stack, len(ungrouped), strings.Join(ungrouped, ", ")),
			MonthlyUSD: z.LogsGB * p.LogsStoredGBMonth,
			Remove: fmt.Sprintf("aws logs describe-log-groups --log-group-name-prefix /aws/lambda/%s- --query 'logGroups[].logGroupName' --output text"+
				" | xargs -n1 aws logs delete-log-group --log-group-name", stack)})
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

package runbook

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Options say what to restore.
type Options struct {
	// Stack is the CloudFormation stack (BuzzRelay-<community>).
	Stack string
	// Snapshot restores from this cluster snapshot (its name or ARN): the
	// final snapshot `make destroy` left, or any manual one.
	Snapshot string
	// Time restores the stack's own cluster as it was at this moment (RFC
	// 3339, inside the 7-day backup window): a copy of that moment is
	// snapshotted first, then restored through the stack.
	Time string
	// CDKArgs are the -c of the stack's deploy (the same as `make deploy`
	// was given; after `make destroy`, with -c relayKmsKey=<retained key>).
	CDKArgs string
	// OldBucket (after `make destroy`) is the retained media bucket whose
	// blobs are copied into the new stack's bucket.
	OldBucket string
	// Now names the temporary cluster and snapshot of a Time restore.
	Now time.Time
}

// Step is one command; Set names the variable its trimmed output sets for
// later steps (${NAME} in their arguments), Want the output it must give
// (a path.Match pattern).
type Step struct {
	Say  string
	Cmd  []string
	Set  string
	Want string
}

// Shell is the step as a line a reader can paste.
func (s Step) Shell() string {
	var b strings.Builder
	if s.Set != "" {
		b.WriteString(s.Set + "=$(")
	}
	for i, a := range s.Cmd {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case strings.Contains(a, "${"): // the variable expands
			a = `"` + strings.NewReplacer(`"`, `\"`, "`", "\\`").Replace(a) + `"`
		case a == "" || strings.ContainsAny(a, " '\"*?[]|;&()<>$`\\"):
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		b.WriteString(a)
	}
	if s.Set != "" {
		b.WriteString(")")
	}
	return b.String()
}

var rdsName = regexp.MustCompile(`[^a-z0-9]+`)

// name is an RDS identifier from the stack's name: letters, digits and
// single hyphens, a letter first, at most 63 characters.
func name(stack, suffix string) string {
	base := strings.Trim(rdsName.ReplaceAllString(strings.ToLower(stack), "-"), "-")
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		base = "buzz-" + base
	}
	if max := 63 - len(suffix) - 1; len(base) > max {
		base = strings.TrimRight(base[:max], "-")
	}
	return base + "-" + suffix
}

// Steps are the AWS commands that restore the stack of template st as o
// asks. On a live stack (the template owns its KMS key) they set the
// stack's DbRestoreSnapshot, and CloudFormation replaces the cluster with
// the restored one; after `make destroy` (the template imports the
// retained key, -c relayKmsKey) they deploy the stack anew on the final
// snapshot. Never an identifier swapped behind CloudFormation's back.
func Steps(st Stack, o Options) ([]Step, error) {
	if (o.Snapshot == "") == (o.Time == "") {
		return nil, fmt.Errorf("name a snapshot (-snapshot) or a point in time (-time), one of them")
	}
	if o.Stack == "" {
		return nil, fmt.Errorf("no stack name")
	}
	if o.Time != "" {
		if !st.OwnsKey {
			return nil, fmt.Errorf("a point-in-time restore needs the live stack's cluster; after make destroy restore its final snapshot (-snapshot)")
		}
		if _, err := time.Parse(time.RFC3339, o.Time); err != nil {
			return nil, fmt.Errorf("-time %q: want RFC 3339, e.g. 2026-12-05T08:00:00Z", o.Time)
		}
	}
	if o.OldBucket != "" && st.OwnsKey {
		return nil, fmt.Errorf("-old-bucket is for a stack deployed anew after make destroy (with -c relayKmsKey): a live stack keeps its bucket")
	}
	var steps []Step
	snapshot := o.Snapshot
	if st.OwnsKey {
		steps = append(steps, Step{Say: "the stack exists and is not in the middle of an update",
			Cmd: []string{"aws", "cloudformation", "describe-stacks", "--stack-name", o.Stack, "--query", "Stacks[0].StackStatus", "--output", "text"}, Want: "*_COMPLETE"})
	} else {
		steps = append(steps, Step{Say: "the retained KMS key is enabled (the restored relay keys are sealed with it)",
			Cmd:  []string{"aws", "kms", "describe-key", "--key-id", st.KMSKeyArn, "--query", "KeyMetadata.KeyState", "--output", "text"},
			Want: "Enabled"})
	}
	if o.Time != "" {
		stamp := o.Now.UTC().Format("200601021504")
		tmp, snap := name(o.Stack, "pitr-"+stamp), name(o.Stack, "restore-"+stamp)
		snapshot = snap
		steps = append(steps,
			Step{Say: "the stack's cluster", Set: "CLUSTER",
				Cmd: []string{"aws", "cloudformation", "describe-stack-resources", "--stack-name", o.Stack, "--logical-resource-id", st.Cluster,
					"--query", "StackResources[0].PhysicalResourceId", "--output", "text"}},
			Step{Say: "its subnet group", Set: "SUBNETS",
				Cmd: []string{"aws", "rds", "describe-db-clusters", "--db-cluster-identifier", "${CLUSTER}", "--query", "DBClusters[0].DBSubnetGroup", "--output", "text"}},
			Step{Say: "its security group", Set: "SG",
				Cmd: []string{"aws", "rds", "describe-db-clusters", "--db-cluster-identifier", "${CLUSTER}", "--query", "DBClusters[0].VpcSecurityGroups[0].VpcSecurityGroupId", "--output", "text"}},
			Step{Say: "a temporary copy of " + o.Time + " (no instance: it is only snapshotted, and bills storage only)",
				Cmd: []string{"aws", "rds", "restore-db-cluster-to-point-in-time", "--source-db-cluster-identifier", "${CLUSTER}",
					"--db-cluster-identifier", tmp, "--restore-to-time", o.Time, "--db-subnet-group-name", "${SUBNETS}",
					"--vpc-security-group-ids", "${SG}", "--query", "DBCluster.Status", "--output", "text"}},
			Step{Say: "wait for it", Cmd: []string{"aws", "rds", "wait", "db-cluster-available", "--db-cluster-identifier", tmp}},
			Step{Say: "its snapshot, which the stack restores from", Cmd: []string{"aws", "rds", "create-db-cluster-snapshot",
				"--db-cluster-identifier", tmp, "--db-cluster-snapshot-identifier", snap, "--query", "DBClusterSnapshot.Status", "--output", "text"}},
			Step{Say: "wait for it", Cmd: []string{"aws", "rds", "wait", "db-cluster-snapshot-available", "--db-cluster-snapshot-identifier", snap}},
			Step{Say: "the temporary copy goes", Cmd: []string{"aws", "rds", "delete-db-cluster", "--db-cluster-identifier", tmp,
				"--skip-final-snapshot", "--query", "DBCluster.Status", "--output", "text"}},
		)
	}
	steps = append(steps, Step{Say: "the snapshot is available",
		Cmd: []string{"aws", "rds", "describe-db-cluster-snapshots", "--db-cluster-snapshot-identifier", snapshot,
			"--query", "DBClusterSnapshots[0].Status", "--output", "text"}, Want: "available"})
	say := "CloudFormation replaces the cluster with one restored from the snapshot; the functions, grants and secret follow it, migrate runs on it, the old cluster leaves its final snapshot"
	if st.Policy != "Snapshot" {
		say = "CloudFormation replaces the cluster with one restored from the snapshot; the functions, grants and secret follow it, migrate runs on it, the old cluster is retained (delete it when sure)"
	}
	if !st.OwnsKey {
		say = "a new stack whose cluster is restored from the snapshot, with the retained KMS key; migrate runs on it and keeps its relay keys"
	}
	args := strings.TrimSpace(o.CDKArgs + " --parameters " + o.Stack + ":" + Parameter + "=" + snapshot)
	steps = append(steps, Step{Say: say, Cmd: []string{"make", "deploy", "CDK_ARGS=" + args}})
	output := func(key, set string) Step {
		return Step{Say: "the stack's " + key, Set: set, Cmd: []string{"aws", "cloudformation", "describe-stacks", "--stack-name", o.Stack,
			"--query", "Stacks[0].Outputs[?OutputKey=='" + key + "'].OutputValue", "--output", "text"}}
	}
	if o.OldBucket != "" {
		steps = append(steps, output("MediaBucketName", "BUCKET"),
			Step{Say: "the members' blobs and the directory from the retained bucket (staged uploads stay behind)",
				Cmd: []string{"aws", "s3", "sync", "s3://" + o.OldBucket, "s3://${BUCKET}", "--exclude", "uploads/*"}})
	}
	steps = append(steps, output("PublicUrl", "URL"),
		Step{Say: "the relay serves the restored data", Cmd: []string{"make", "smoke", "URL=${URL}"}})
	return steps, nil
}

// Package runbook is the restore runbook of docs/deploy.md ("Backups and
// restore") as code: what a synthesized stack template must hold for a
// restore to go through CloudFormation (Check), the AWS steps that
// restore a deployed stack from a snapshot or a point in time (Steps).
// localdev/restore (`make restore`) runs them, and its Local the same data
// steps on a local Postgres; infra's tests run Check and Steps on every
// profile's synthesized template.
package runbook

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// The names the stack gives the restore (infra/restore.go); Check holds
// the template to them.
const (
	Parameter = "DbRestoreSnapshot"
	Condition = "Restoring"
	// MigrateType is the migrate custom resource, which must run again on
	// the restored database.
	MigrateType = "Custom::BuzzMigrate"
)

// Stack is what Check learnt of a template.
type Stack struct {
	// Cluster is the Aurora cluster's logical id.
	Cluster string
	// OldClusterKept: the replaced cluster leaves its final snapshot
	// (DeletionPolicy Snapshot) or stays (Retain, RetainExceptOnCreate);
	// Policy is which.
	Policy string
	// OwnsKey: the template creates the KMS key that seals the relay keys
	// (false: it imports a retained one, -c relayKmsKey).
	OwnsKey bool
	// KMSKeyArn is the imported key's ARN when !OwnsKey.
	KMSKeyArn string
}

type template struct {
	Parameters map[string]struct {
		Default any `json:"Default"`
	} `json:"Parameters"`
	Conditions map[string]any `json:"Conditions"`
	Resources  map[string]struct {
		Type           string         `json:"Type"`
		DeletionPolicy string         `json:"DeletionPolicy"`
		Properties     map[string]any `json:"Properties"`
	} `json:"Resources"`
}

func same(a any, js string) bool {
	var b any
	if err := json.Unmarshal([]byte(js), &b); err != nil {
		panic(err)
	}
	return reflect.DeepEqual(a, b)
}

// Check reads a synthesized template (infra/cdk.out/<stack>.template.json)
// and says whether setting Parameter restores its database through
// CloudFormation without losing the running one: every reason it would
// not, at once.
//
//   - Parameter exists and defaults to "" (a plain deploy makes a new,
//     empty cluster), and Condition is "Parameter is not empty";
//   - the one AWS::RDS::DBCluster takes SnapshotIdentifier from it and
//     drops MasterUsername under Condition (a snapshot keeps its master
//     user; RDS refuses both), and has no DBClusterIdentifier (a
//     replacement is created before the old cluster is deleted: a fixed
//     name would collide);
//   - its DeletionPolicy keeps the replaced cluster's data (Snapshot,
//     Retain, RetainExceptOnCreate);
//   - every instance, every DB_HOST, every rds-db:connect grant and the
//     migrate resource refer to the cluster (so they follow the restored
//     one, and migrate runs on it);
//   - the KMS key that seals the relay keys outlives the stack, or is a
//     retained one the template imports.
func Check(b []byte) (Stack, error) {
	var t template
	if err := json.Unmarshal(b, &t); err != nil {
		return Stack{}, fmt.Errorf("template: %w", err)
	}
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if p, ok := t.Parameters[Parameter]; !ok || p.Default != "" {
		fail("parameter %s with default \"\" is missing: this template cannot restore through the stack", Parameter)
	}
	if !same(t.Conditions[Condition], `{"Fn::Not":[{"Fn::Equals":[{"Ref":"`+Parameter+`"},""]}]}`) {
		fail("condition %s is not %s != \"\": %v", Condition, Parameter, t.Conditions[Condition])
	}
	var st Stack
	for id, r := range t.Resources {
		if r.Type != "AWS::RDS::DBCluster" {
			continue
		}
		if st.Cluster != "" {
			fail("two clusters (%s, %s): the restore knows one", st.Cluster, id)
		}
		st.Cluster, st.Policy = id, r.DeletionPolicy
		p := r.Properties
		if !same(p["SnapshotIdentifier"], `{"Fn::If":["`+Condition+`",{"Ref":"`+Parameter+`"},{"Ref":"AWS::NoValue"}]}`) {
			fail("cluster %s: SnapshotIdentifier %v, want %s's value while %s", id, p["SnapshotIdentifier"], Parameter, Condition)
		}
		mu, _ := p["MasterUsername"].(map[string]any)
		if branches, ok := mu["Fn::If"].([]any); !ok || len(branches) != 3 || branches[0] != Condition || !same(branches[1], `{"Ref":"AWS::NoValue"}`) {
			fail("cluster %s: MasterUsername %v is set while restoring (RDS takes the snapshot's)", id, p["MasterUsername"])
		}
		if _, ok := p["DBClusterIdentifier"]; ok {
			fail("cluster %s has a fixed DBClusterIdentifier: the restored cluster, created before the old one is deleted, would collide with it", id)
		}
		switch r.DeletionPolicy {
		case "Snapshot", "Retain", "RetainExceptOnCreate":
		default:
			fail("cluster %s: DeletionPolicy %q: the cluster a restore replaces would be deleted without a snapshot", id, r.DeletionPolicy)
		}
	}
	if st.Cluster == "" {
		fail("no AWS::RDS::DBCluster")
		return st, errors.Join(errs...)
	}
	ref := `{"Ref":"` + st.Cluster + `"}`
	endpoint := `{"Fn::GetAtt":["` + st.Cluster + `","Endpoint.Address"]}`
	resourceID := `"Fn::GetAtt":["` + st.Cluster + `","DBClusterResourceId"]`
	instances, hosts, grants, migrates, keys := 0, 0, 0, 0, 0
	for id, r := range t.Resources {
		p := r.Properties
		switch r.Type {
		case "AWS::RDS::DBInstance":
			instances++
			if !same(p["DBClusterIdentifier"], ref) {
				fail("instance %s: DBClusterIdentifier %v is not the cluster's: it would not follow the restored cluster", id, p["DBClusterIdentifier"])
			}
		case "AWS::Lambda::Function":
			env, _ := p["Environment"].(map[string]any)
			vars, _ := env["Variables"].(map[string]any)
			if h, ok := vars["DB_HOST"]; ok {
				hosts++
				if !same(h, endpoint) {
					fail("function %s: DB_HOST %v is not the cluster's endpoint", id, h)
				}
			}
		case "AWS::IAM::Policy":
			b, _ := json.Marshal(p)
			if strings.Contains(string(b), "rds-db:connect") {
				grants++
				if !strings.Contains(string(b), resourceID) {
					fail("policy %s grants rds-db:connect on another database than the cluster's resource id", id)
				}
			}
		case MigrateType:
			migrates++
			if !same(p["DatabaseHost"], endpoint) {
				fail("migrate resource %s: DatabaseHost %v is not the cluster's endpoint: migrate would not run on the restored database", id, p["DatabaseHost"])
			}
		case "AWS::KMS::Key":
			keys++
			st.OwnsKey = true
			if r.DeletionPolicy != "Retain" && r.DeletionPolicy != "RetainExceptOnCreate" {
				fail("KMS key %s: DeletionPolicy %q: the relay keys sealed in a snapshot would outlive their key", id, r.DeletionPolicy)
			}
		case "AWS::KMS::Alias":
			if a, ok := p["TargetKeyId"].(string); ok && strings.HasPrefix(a, "arn:") {
				st.KMSKeyArn = a
			}
		}
	}
	if instances == 0 {
		fail("no instance in the cluster")
	}
	if migrates != 1 {
		fail("%d migrate resources (%s), want 1", migrates, MigrateType)
	}
	if hosts == 0 && grants == 0 {
		fail("no function reaches the database (DB_HOST, rds-db:connect)")
	}
	if keys == 0 && st.KMSKeyArn == "" {
		fail("no KMS key: neither one the stack keeps nor an imported one (-c relayKmsKey)")
	}
	return st, errors.Join(errs...)
}

package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/buzzrelay/relay/localdev/restore/runbook"
)

// TestRestoreGoesThroughTheStack holds each profile's synthesized template
// to what `make restore` (localdev/restore) relies on, with the
// runbook's own check: the DbRestoreSnapshot parameter (default empty)
// feeds the cluster's SnapshotIdentifier, MasterUsername is dropped while
// restoring, the cluster has no fixed identifier, a replaced cluster keeps
// its data, and the instance, every DB_HOST, every rds-db:connect grant
// and the migrate resource follow the cluster. After make destroy, -c relayKmsKey imports the
// retained key instead of creating one, and the runbook's steps deploy the
// stack anew on the final snapshot; never an identifier swapped under
// CloudFormation.
func TestRestoreGoesThroughTheStack(t *testing.T) {
	const retained = "arn:aws:kms:eu-west-1:123456789012:key/6e9741a4-87fd-47ab-92a6-a2097aef63f6"
	for _, c := range []struct {
		name   string
		ctx    map[string]any
		policy string
		owns   bool
	}{
		{"community", nil, "Snapshot", true},
		{"managed", map[string]any{"profile": "managed"}, "RetainExceptOnCreate", true},
		{"after-destroy", map[string]any{"relayKmsKey": retained}, "Snapshot", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s synthesized
			if c.ctx == nil {
				s = defaultStack(t)
			} else {
				s = synth(t, c.ctx)
			}
			b, _ := json.Marshal(s.tpl.ToJSON())
			st, err := runbook.Check(b)
			if err != nil {
				t.Fatal(err)
			}
			if st.Policy != c.policy || st.OwnsKey != c.owns {
				t.Errorf("cluster policy %s, owns its key %v; want %s, %v", st.Policy, st.OwnsKey, c.policy, c.owns)
			}
			if !c.owns {
				if st.KMSKeyArn != retained || len(s.ofType("AWS::KMS::Key")) != 0 {
					t.Errorf("relayKmsKey: alias target %q, %d keys created", st.KMSKeyArn, len(s.ofType("AWS::KMS::Key")))
				}
				// Every grant names the retained key.
				for id, r := range s.ofType("AWS::IAM::Policy") {
					pb, _ := json.Marshal(r.Properties)
					if strings.Contains(string(pb), "kms:Decrypt") && !strings.Contains(string(pb), retained) {
						t.Errorf("policy %s grants kms:Decrypt on another key", id)
					}
				}
			}
			o := runbook.Options{Stack: "BuzzRelay-default", Snapshot: "buzzrelay-default-final", Now: time.Now()}
			if c.owns {
				o.Snapshot, o.Time = "", "2026-12-05T08:00:00Z"
			}
			steps, err := runbook.Steps(st, o)
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, step := range steps {
				all = append(all, step.Shell())
			}
			out := strings.Join(all, "\n")
			if !strings.Contains(out, "BuzzRelay-default:"+RestoreParameter+"=") || strings.Contains(out, "--new-db-cluster-identifier") {
				t.Errorf("steps:\n%s", out)
			}
		})
	}
	if RestoreParameter != runbook.Parameter || RestoreCondition != runbook.Condition || MigrateResourceType != runbook.MigrateType {
		t.Errorf("the stack's names (%s, %s, %s) are not the runbook's", RestoreParameter, RestoreCondition, MigrateResourceType)
	}
	bad := cdkContext(t, map[string]any{"relayKmsKey": "alias/mine"})
	if _, err := SettingsFrom(awscdk.NewApp(&awscdk.AppProps{Context: &bad}).Node()); err == nil {
		t.Error("relayKmsKey: an alias was accepted (the key's complete ARN is needed)")
	}
}

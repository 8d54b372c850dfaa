package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/localdev/cost/model"
)

// `make destroy` (localdev/retained over the template) names, for each
// profile, every resource the deleted stack leaves behind, with its cost
// and the command that removes it: the community profile keeps the
// cluster's final snapshot, the KMS key that seals the relay keys stored in
// it, the master secret and the media bucket; the managed profile
// (retainData) the cluster itself (its writer instance is deleted) with the
// same key, secret and bucket; both, the log groups Lambda makes for the
// functions the template gives none (CDK's custom-resource handlers).
func TestDestroyListsWhatEachProfileRetains(t *testing.T) {
	for _, c := range []struct {
		name string
		ctx  map[string]any
		want map[string]string // type -> what its line says
	}{
		{"community", nil, map[string]string{
			"AWS::RDS::DBCluster": "final snapshot",
			"AWS::KMS::Key":       "KMS key", "AWS::SecretsManager::Secret": "master secret", "AWS::S3::Bucket": "media bucket",
			model.LogGroupsOutsideTemplate: "log groups"}},
		{"managed", map[string]any{"profile": "managed"}, map[string]string{
			"AWS::RDS::DBCluster": "retained with its data",
			"AWS::KMS::Key":       "KMS key", "AWS::SecretsManager::Secret": "master secret", "AWS::S3::Bucket": "media bucket",
			model.LogGroupsOutsideTemplate: "log groups"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := synth(t, c.ctx)
			b, _ := json.Marshal(s.tpl.ToJSON())
			kept, err := model.Retained(b, "BuzzRelay-default", model.Sizes{DatabaseGB: 1, MediaGB: 10, LogsGB: 0.1}, model.USEast1)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]model.Kept{}
			for _, k := range kept {
				t.Logf("%s %s $%.2f: %s\n  %s", k.Type, k.LogicalID, k.MonthlyUSD, k.What, k.Remove)
				if _, dup := got[k.Type]; dup {
					t.Errorf("two retained %s", k.Type)
				}
				got[k.Type] = k
			}
			if len(got) != len(c.want) {
				t.Errorf("retained types %d, want %d", len(got), len(c.want))
			}
			for typ, what := range c.want {
				k, ok := got[typ]
				switch {
				case !ok:
					t.Errorf("%s is not listed", typ)
				case !strings.Contains(k.What, what):
					t.Errorf("%s: %q, want it to say %q", typ, k.What, what)
				case typ != "AWS::RDS::DBInstance" && (k.Remove == "" || k.MonthlyUSD <= 0):
					t.Errorf("%s: $%.2f, remove %q", typ, k.MonthlyUSD, k.Remove)
				}
			}
		})
	}
}

// Deleting the stack never deletes data, nor what opens it: in every
// profile each database cluster is retained or leaves its final snapshot,
// and each KMS key (it seals the relay keys and push secrets stored in the
// database), Secrets Manager secret (the master user's password) and S3
// bucket (members' blobs) is retained. A key scheduled for deletion with
// the stack would leave a snapshot whose relay keys no one can open.
func TestDestroyKeepsDataAndItsKeys(t *testing.T) {
	keeps := map[string]bool{"Retain": true, "RetainExceptOnCreate": true}
	for _, c := range []struct {
		name string
		ctx  map[string]any
	}{{"community", nil}, {"managed", map[string]any{"profile": "managed"}}} {
		t.Run(c.name, func(t *testing.T) {
			s := synth(t, c.ctx)
			held := 0
			for id, r := range s.res {
				switch r.Type {
				case "AWS::RDS::DBCluster":
					if !keeps[r.DeletionPolicy] && r.DeletionPolicy != "Snapshot" {
						t.Errorf("%s %s: DeletionPolicy %q, want a snapshot or retained", r.Type, id, r.DeletionPolicy)
					}
				case "AWS::KMS::Key", "AWS::SecretsManager::Secret", "AWS::S3::Bucket":
					if !keeps[r.DeletionPolicy] {
						t.Errorf("%s %s: DeletionPolicy %q, want it retained", r.Type, id, r.DeletionPolicy)
					}
				default:
					continue
				}
				held++
			}
			if held < 3 {
				t.Errorf("%d resources holding data or keys, want at least the cluster, the key and the secret", held)
			}
		})
	}
}

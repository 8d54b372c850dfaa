package model

import (
	"strings"
	"testing"
)

// What a deleted stack leaves is read from DeletionPolicy alone: a
// Snapshot cluster leaves its snapshot, Retain and RetainExceptOnCreate
// resources stay whole, Delete ones go; each kept one has its monthly
// cost at the given sizes and a removal command naming the stack.
func TestRetainedFollowsDeletionPolicy(t *testing.T) {
	tpl := `{"Resources":{
  "Db1":{"Type":"AWS::RDS::DBCluster","DeletionPolicy":"Snapshot"},
  "Key1":{"Type":"AWS::KMS::Key","DeletionPolicy":"Delete"},
  "Media1":{"Type":"AWS::S3::Bucket","DeletionPolicy":"RetainExceptOnCreate"},
  "Secret1":{"Type":"AWS::SecretsManager::Secret","DeletionPolicy":"Retain"},
  "Key2":{"Type":"AWS::KMS::Key","DeletionPolicy":"Retain","Properties":{"EnableKeyRotation":true}},
  "Logs":{"Type":"AWS::Logs::LogGroup","DeletionPolicy":"Delete"}}}`
	kept, err := Retained([]byte(tpl), "BuzzRelay-x", Sizes{DatabaseGB: 10, MediaGB: 100}, USEast1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"Db1": 10 * 0.021, "Media1": 100 * 0.023, "Secret1": 0.40, "Key2": 3.00}
	if len(kept) != len(want) {
		t.Fatalf("kept %+v", kept)
	}
	for _, k := range kept {
		if w, ok := want[k.LogicalID]; !ok || abs(k.MonthlyUSD-w) > 1e-9 || k.Remove == "" || k.What == "" {
			t.Errorf("%+v, want $%.3f", k, w)
		}
		if !strings.Contains(strings.ToLower(k.Remove), "buzzrelay-x") {
			t.Errorf("%s: the removal command does not name the stack: %s", k.LogicalID, k.Remove)
		}
	}
	if _, err := Retained([]byte("{"), "x", Sizes{}, USEast1); err == nil {
		t.Error("a broken template was read")
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// Log groups no template holds outlive the stack: one line for the
// functions the template gives no log group (Lambda makes theirs at the
// first run), and in the edge stack one for Lambda@Edge's regional groups,
// each with its cost and a command naming them; functions with their own
// log group (deleted with the stack) add nothing.
func TestRetainedListsLogGroupsOutsideTheTemplate(t *testing.T) {
	tpl := `{"Resources":{
  "Own":{"Type":"AWS::Lambda::Function","Properties":{"LoggingConfig":{"LogGroup":{"Ref":"OwnLogs"}}}},
  "OwnLogs":{"Type":"AWS::Logs::LogGroup","DeletionPolicy":"Delete"},
  "Handler1":{"Type":"AWS::Lambda::Function","Properties":{}},
  "Handler2":{"Type":"AWS::Lambda::Function","Properties":{"Runtime":"nodejs22.x"}}}}`
	kept, err := Retained([]byte(tpl), "BuzzRelay-x", Sizes{LogsGB: 1}, USEast1)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0].Type != LogGroupsOutsideTemplate || kept[0].LogicalID != "Handler1,Handler2" ||
		abs(kept[0].MonthlyUSD-0.03) > 1e-9 || !strings.Contains(kept[0].Remove, "--log-group-name-prefix /aws/lambda/BuzzRelay-x-") {
		t.Fatalf("%+v", kept)
	}
	edge := `{"Resources":{"EdgeUpload":{"Type":"AWS::Lambda::Function","Properties":{"FunctionName":"BuzzRelay-x-edge-upload","LoggingConfig":{"LogGroup":{"Ref":"L"}}}}}}`
	kept, err = Retained([]byte(edge), "BuzzRelay-x-edge", Sizes{}, USEast1)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || !strings.Contains(kept[0].Remove, "/aws/lambda/us-east-1.BuzzRelay-x-edge-upload") || !strings.Contains(kept[0].Remove, "describe-regions") {
		t.Fatalf("edge: %+v", kept)
	}
}

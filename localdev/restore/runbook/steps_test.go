package runbook

import (
	"strings"
	"testing"
	"time"
)

// Check refuses a template that would restore around CloudFormation or
// lose the running database, naming each reason; Steps gives each kind of
// restore its commands and refuses what cannot work.
func TestCheckAndSteps(t *testing.T) {
	good := `{"Parameters":{"DbRestoreSnapshot":{"Default":""}},
 "Conditions":{"Restoring":{"Fn::Not":[{"Fn::Equals":[{"Ref":"DbRestoreSnapshot"},""]}]}},
 "Resources":{
  "Db":{"Type":"AWS::RDS::DBCluster","DeletionPolicy":"Snapshot","Properties":{
    "SnapshotIdentifier":{"Fn::If":["Restoring",{"Ref":"DbRestoreSnapshot"},{"Ref":"AWS::NoValue"}]},
    "MasterUsername":{"Fn::If":["Restoring",{"Ref":"AWS::NoValue"},"buzz"]}}},
  "DbWriter":{"Type":"AWS::RDS::DBInstance","Properties":{"DBClusterIdentifier":{"Ref":"Db"}}},
  "Fn":{"Type":"AWS::Lambda::Function","Properties":{"Environment":{"Variables":{"DB_HOST":{"Fn::GetAtt":["Db","Endpoint.Address"]}}}}},
  "Migrate":{"Type":"Custom::BuzzMigrate","Properties":{"DatabaseHost":{"Fn::GetAtt":["Db","Endpoint.Address"]}}},
  "Key":{"Type":"AWS::KMS::Key","DeletionPolicy":"RetainExceptOnCreate"}}}`
	st, err := Check([]byte(good))
	if err != nil || st.Cluster != "Db" || !st.OwnsKey {
		t.Fatalf("good template: %+v %v", st, err)
	}
	for _, c := range []struct{ old, new, want string }{
		{`"DbRestoreSnapshot":{"Default":""}`, `"Other":{"Default":""}`, "parameter DbRestoreSnapshot"},
		{`"DeletionPolicy":"Snapshot"`, `"DeletionPolicy":"Delete"`, "deleted without a snapshot"},
		{`"MasterUsername":{"Fn::If":["Restoring",{"Ref":"AWS::NoValue"},"buzz"]}`, `"MasterUsername":"buzz"`, "MasterUsername"},
		{`"Properties":{
    "SnapshotIdentifier"`, `"Properties":{"DBClusterIdentifier":"fixed",
    "SnapshotIdentifier"`, "collide"},
		{`"DBClusterIdentifier":{"Ref":"Db"}`, `"DBClusterIdentifier":"buzz-old"`, "would not follow"},
		{`"DB_HOST":{"Fn::GetAtt":["Db","Endpoint.Address"]}`, `"DB_HOST":"old.cluster.example"`, "DB_HOST"},
		{`"DatabaseHost":{"Fn::GetAtt":["Db","Endpoint.Address"]}`, `"Community":"default"`, "migrate would not run"},
		{`"DeletionPolicy":"RetainExceptOnCreate"`, `"DeletionPolicy":"Delete"`, "outlive their key"},
	} {
		bad := strings.Replace(good, c.old, c.new, 1)
		if bad == good {
			t.Fatalf("case %q changed nothing", c.want)
		}
		if _, err := Check([]byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: %v, want %q", c.old, c.new, err, c.want)
		}
	}

	now := time.Date(2026, 12, 7, 17, 30, 0, 0, time.UTC)
	cmds := func(steps []Step) string {
		var b strings.Builder
		for _, s := range steps {
			b.WriteString(s.Shell() + "\n")
		}
		return b.String()
	}
	// From a snapshot, in place: the parameter, through make deploy.
	steps, err := Steps(st, Options{Stack: "BuzzRelay-default", Snapshot: "snap-1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	out := cmds(steps)
	for _, want := range []string{"describe-db-cluster-snapshots --db-cluster-snapshot-identifier snap-1",
		"make deploy 'CDK_ARGS=--parameters BuzzRelay-default:DbRestoreSnapshot=snap-1'", `make smoke "URL=${URL}"`} {
		if !strings.Contains(out, want) {
			t.Errorf("snapshot steps lack %q:\n%s", want, out)
		}
	}
	for _, never := range []string{"--new-db-cluster-identifier", "modify-db-cluster"} {
		if strings.Contains(out, never) {
			t.Errorf("the steps swap identifiers (%s):\n%s", never, out)
		}
	}
	// A point in time: a temporary copy, its snapshot, then the same.
	steps, err = Steps(st, Options{Stack: "BuzzRelay-default", Time: "2026-12-05T08:00:00Z", CDKArgs: "-c alarmEmail=a@b.example", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	out = cmds(steps)
	for _, want := range []string{"restore-db-cluster-to-point-in-time --source-db-cluster-identifier \"${CLUSTER}\" --db-cluster-identifier buzzrelay-default-pitr-202612071730 --restore-to-time 2026-12-05T08:00:00Z",
		"create-db-cluster-snapshot --db-cluster-identifier buzzrelay-default-pitr-202612071730 --db-cluster-snapshot-identifier buzzrelay-default-restore-202612071730",
		"delete-db-cluster --db-cluster-identifier buzzrelay-default-pitr-202612071730 --skip-final-snapshot",
		"'CDK_ARGS=-c alarmEmail=a@b.example --parameters BuzzRelay-default:DbRestoreSnapshot=buzzrelay-default-restore-202612071730'"} {
		if !strings.Contains(out, want) {
			t.Errorf("point-in-time steps lack %q:\n%s", want, out)
		}
	}
	// After make destroy (the template imports the retained key).
	gone := Stack{Cluster: "Db", Policy: "Snapshot", KMSKeyArn: "arn:aws:kms:eu-west-1:123456789012:key/k"}
	steps, err = Steps(gone, Options{Stack: "BuzzRelay-default", Snapshot: "final", OldBucket: "buzzrelay-default-media-x", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	out = cmds(steps)
	for _, want := range []string{"aws kms describe-key --key-id arn:aws:kms:eu-west-1:123456789012:key/k", "aws s3 sync s3://buzzrelay-default-media-x \"s3://${BUCKET}\" --exclude 'uploads/*'"} {
		if !strings.Contains(out, want) {
			t.Errorf("after-destroy steps lack %q:\n%s", want, out)
		}
	}
	for _, c := range []struct {
		st   Stack
		o    Options
		want string
	}{
		{st, Options{Stack: "s"}, "one of them"},
		{st, Options{Stack: "s", Snapshot: "a", Time: "2026-12-05T08:00:00Z"}, "one of them"},
		{st, Options{Stack: "s", Time: "yesterday"}, "RFC 3339"},
		{gone, Options{Stack: "s", Time: "2026-12-05T08:00:00Z"}, "final snapshot"},
		{st, Options{Stack: "s", Snapshot: "a", OldBucket: "b"}, "keeps its bucket"},
	} {
		if _, err := Steps(c.st, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if n := name(strings.Repeat("BuzzRelay-very-long-community-name-", 3), "restore-202612071730"); len(n) > 63 || strings.Contains(n, "--") {
		t.Errorf("identifier %q", n)
	}
}

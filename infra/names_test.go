package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// physicalNameKeys are the properties that give a resource a name AWS
// requires to be unique in an account (and region): two stacks that set
// the same value collide. "Name" counts on the types listed in namedTypes.
var physicalNameKeys = map[string]bool{
	"LaunchTemplateName": true, "FunctionName": true, "RoleName": true, "BucketName": true, "TableName": true,
	"LogGroupName": true, "AlarmName": true, "TopicName": true, "AliasName": true, "BudgetName": true,
	"QueueName": true, "KeyName": true, "ManagedPolicyName": true, "InstanceProfileName": true,
	"DBClusterIdentifier": true, "DBInstanceIdentifier": true, "DBSubnetGroupName": true,
	"DBClusterParameterGroupName": true, "DBParameterGroupName": true, "SecretName": true, "StateMachineName": true,
}

var namedTypes = []string{"AWS::CloudFront::", "AWS::SecretsManager::Secret", "AWS::SSM::Parameter", "AWS::Events::Rule"}

// fixedNames is every physical name a template sets, path -> value (as
// JSON), leaving out references to the template's own resources (a name
// CloudFormation generates, unique per stack).
func fixedNames(s synthesized) map[string]string {
	out := map[string]string{}
	var walk func(typ, path string, v any)
	walk = func(typ, path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				named := physicalNameKeys[k]
				if k == "Name" {
					for _, t := range namedTypes {
						named = named || strings.HasPrefix(typ, t)
					}
				}
				if named && !isResourceRef(s, vv) {
					out[path+"."+k] = js(vv)
				}
				walk(typ, path+"."+k, vv)
			}
		case []any:
			for i, vv := range x {
				walk(typ, fmt.Sprintf("%s[%d]", path, i), vv)
			}
		}
	}
	for id, r := range s.res {
		walk(r.Type, r.Type+" "+id, r.Properties)
	}
	return out
}

// isResourceRef: v is {"Ref": id} or {"Fn::GetAtt": [id, ...]} of a
// resource of s.
func isResourceRef(s synthesized, v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	if id, ok := m["Ref"].(string); ok {
		_, res := s.res[id]
		return res
	}
	if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) > 0 {
		_, res := s.res[fmt.Sprint(ga[0])]
		return res
	}
	return false
}

// collisions are the fixed names a and b share.
func collisions(a, b synthesized) []string {
	inB := map[string]bool{}
	for _, v := range fixedNames(b) {
		inB[v] = true
	}
	var out []string
	for p, v := range fixedNames(a) {
		if inB[v] && !strings.Contains(v, `"AWS::StackName"`) && !strings.Contains(v, `"AWS::StackId"`) {
			out = append(out, p+" = "+v)
		}
	}
	sort.Strings(out)
	return out
}

// Must show: `cdk synth -c egress=nat-instance` twice with different stack
// names gives no fixed resource names that collide (the NAT instance's
// launch template, the key alias, the budget, the CloudFront function),
// with every option that adds a named resource on.
func TestTwoStacksNoNameCollides(t *testing.T) {
	dir := assetDir(t)
	cert := "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
	opts := func(stack string, extra map[string]any) map[string]any {
		o := map[string]any{
			"assetDir": dir, "egress": "nat-instance", "stackName": stack, "kmsEndpoint": true, "alarms": true,
			"domain": "relay.example.com", "certificateArn": cert, "budgetUSD": 5, "alarmEmail": "ops@example.com",
		}
		for k, v := range extra {
			o[k] = v
		}
		return o
	}
	a := synth(t, opts("BuzzRelay-default", nil))
	b := synth(t, opts("BuzzRelay-default-staging", nil))
	if len(fixedNames(a)) == 0 {
		t.Fatal("no physical names found at all: the scan is broken")
	}
	if c := collisions(a, b); len(c) > 0 {
		t.Errorf("names that collide between two stacks:\n%s", strings.Join(c, "\n"))
	}
	// The scan finds the collision the feature flag removes.
	old := synth(t, opts("BuzzRelay-old", map[string]any{"@aws-cdk/aws-ec2:uniqueImdsv2TemplateName": false}))
	oldToo := synth(t, opts("BuzzRelay-old-staging", map[string]any{"@aws-cdk/aws-ec2:uniqueImdsv2TemplateName": false}))
	if c := strings.Join(collisions(old, oldToo), "\n"); !strings.Contains(c, `LaunchTemplateName = "NatInstanceLaunchTemplate"`) {
		t.Errorf("without uniqueImdsv2TemplateName the launch template name must collide; scan found %q", c)
	}
}

// cdk.json sets every feature flag the pinned aws-cdk-lib recommends
// (recommended-feature-flags.json in its jsii bundle, what `cdk init`
// writes), with the recommended value: upgrading aws-cdk-lib fails here
// until the new flags are reviewed (docs/deploy.md, "CDK feature flags").
func TestRecommendedFeatureFlags(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "github.com/aws/aws-cdk-go/awscdk/v2").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	f, err := os.Open(filepath.Join(dir, "jsii", "aws-cdk-lib-"+strings.TrimPrefix(version, "v")+".tgz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var rec map[string]any
	for {
		h, err := tr.Next()
		if err == io.EOF {
			t.Fatal("no package/recommended-feature-flags.json in the aws-cdk-lib bundle")
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "package/recommended-feature-flags.json" {
			if err := json.NewDecoder(tr).Decode(&rec); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	ctx := cdkContext(t, nil)
	if len(rec) < 50 {
		t.Fatalf("only %d recommended flags", len(rec))
	}
	for k, want := range rec {
		if got, ok := ctx[k]; !ok || js(got) != js(want) {
			t.Errorf("cdk.json %s = %v, recommended %v", k, js(got), js(want))
		}
	}
}

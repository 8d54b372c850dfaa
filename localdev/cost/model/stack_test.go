package model

import (
	"encoding/json"
	"strings"
	"testing"
)

// tpl is a template of the given resources (logical id -> type and
// properties) with the DbMinCapacity parameter.
func tpl(t *testing.T, res map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"Parameters": map[string]any{"DbMinCapacity": map[string]any{"Type": "Number", "Default": 0}},
		"Resources":  res,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func r(typ string, props map[string]any) map[string]any {
	return map[string]any{"Type": typ, "Properties": props}
}

func TestFromTemplate(t *testing.T) {
	base := map[string]any{
		"wsmessage03F346B9": r("AWS::Lambda::Function", map[string]any{"Description": "buzz relay ws-message", "MemorySize": 512,
			"Architectures": []string{"arm64"}, "Environment": map[string]any{"Variables": map[string]any{"DB_IDLE_TIMEOUT": "30s"}}}),
		"ProviderframeworkonEvent252E0912": r("AWS::Lambda::Function", map[string]any{"Runtime": "nodejs24.x"}),
		"logs1846B691":                     r("AWS::Logs::LogGroup", map[string]any{"RetentionInDays": 7}),
		"Db5D02A0A9":                       r("AWS::RDS::DBCluster", map[string]any{"ServerlessV2ScalingConfiguration": map[string]any{"MinCapacity": map[string]any{"Ref": "DbMinCapacity"}, "MaxCapacity": 2}}),
		"Dbwriter9B286E50":                 r("AWS::RDS::DBInstance", map[string]any{"DBInstanceClass": "db.serverless"}),
		"Key":                              r("AWS::KMS::Key", map[string]any{"EnableKeyRotation": true}),
		"Eoigw":                            r("AWS::EC2::EgressOnlyInternetGateway", nil),
		"errors":                           r("AWS::CloudWatch::Alarm", map[string]any{"Namespace": "AWS/Lambda"}),
		"recover":                          r("AWS::CloudWatch::Alarm", map[string]any{"Namespace": "AWS/EC2"}),
		"Kms":                              r("AWS::EC2::VPCEndpoint", map[string]any{"VpcEndpointType": "Interface", "SubnetIds": []string{"a", "b"}}),
		"S3":                               r("AWS::EC2::VPCEndpoint", map[string]any{"VpcEndpointType": "Gateway"}),
		"MigrateE0A1B2C3":                  r("Custom::BuzzMigrate", nil),
		"RoleDEFAULTPOLICY1":               r("AWS::IAM::Policy", nil),
		"LivenessDelay1A2B3C4D":            r("AWS::SQS::Queue", map[string]any{"DelaySeconds": 30}),
		"LivenessSchedule1A2B3C4D":         r("AWS::Events::Rule", map[string]any{"ScheduleExpression": "rate(1 minute)"}),
		"LivenessDelayPolicy1A2B3C4D":      r("AWS::SQS::QueuePolicy", nil),
		"wspushSqsEventSource1A2B3C4D":     r("AWS::Lambda::EventSourceMapping", nil),
	}
	s, err := FromTemplate(tpl(t, base))
	if err != nil {
		t.Fatal(err)
	}
	want := Stack{
		Functions: []Function{{"ProviderframeworkonEvent", 128, "x86_64"}, {"ws-message", 512, "arm64"}},
		LogGroups: 1, LogRetentionDays: 7, Alarms: 1,
		Network: Network{Egress: "ipv6", Alarms: 1, InterfaceEndpoints: 2},
		KMSKeys: 1, Rotating: 1,
		Database:  Database{Instances: 1, MinACU: 0, AutoPauseSeconds: 300, PoolIdleSeconds: 30},
		Schedules: 1, Queues: 1,
	}
	if d := Diff(s, want); d != nil {
		t.Errorf("differences:\n%s", strings.Join(d, "\n"))
	}

	for _, c := range []struct {
		name string
		edit func(map[string]any)
		err  string // in the error; "" = no error
	}{
		{"unknown type", func(m map[string]any) { m["H"] = r("AWS::EC2::Host", nil) }, "H (AWS::EC2::Host)"},
		{"a rule that is no schedule", func(m map[string]any) {
			m["R"] = r("AWS::Events::Rule", map[string]any{"EventPattern": map[string]any{}})
		}, "not a schedule"},
		{"logs kept forever", func(m map[string]any) { m["L"] = r("AWS::Logs::LogGroup", nil) }, "keeps its logs forever"},
		{"provisioned instance", func(m map[string]any) {
			m["Dbwriter9B286E50"] = r("AWS::RDS::DBInstance", map[string]any{"DBInstanceClass": "db.r6g.large"})
		}, "db.serverless only"},
		{"explicit auto-pause", func(m map[string]any) {
			m["Db5D02A0A9"] = r("AWS::RDS::DBCluster", map[string]any{"ServerlessV2ScalingConfiguration": map[string]any{"MinCapacity": 0, "SecondsUntilAutoPause": 3600}})
		}, ""},
		{"bad idle timeout", func(m map[string]any) {
			m["F"] = r("AWS::Lambda::Function", map[string]any{"Environment": map[string]any{"Variables": map[string]any{"DB_IDLE_TIMEOUT": "soon"}}})
		}, "DB_IDLE_TIMEOUT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			c.edit(m)
			s, err := FromTemplate(tpl(t, m))
			switch {
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one with %q", err, c.err)
			case c.err == "" && s.Database.AutoPauseSeconds != 3600:
				t.Errorf("auto-pause %g s, want 3600", s.Database.AutoPauseSeconds)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	a, _ := Assumed("managed", "")
	b, _ := Assumed("managed", "")
	if d := Diff(a, b); d != nil {
		t.Fatalf("equal stacks differ: %v", d)
	}
	b.Alarms = 13
	b.Functions = b.Functions[1:]
	d := strings.Join(Diff(a, b), "\n")
	for _, want := range []string{"template: alarms: 23", "model:    alarms: 13", "template: function CustomVpcRestrictDefaultSGCustomResourceProviderHandler: 128 MB x86_64"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
}

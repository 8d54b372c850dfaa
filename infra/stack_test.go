package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// assetDir is a directory of real (tiny) Lambda zips, one per function, so
// the stack can be synthesized without `make build`. The template refers to
// them by hash; nothing from here is ever deployed.
func assetDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range Functions {
		out, err := os.Create(filepath.Join(dir, f.Name+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(out)
		h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate}
		h.SetMode(0o755)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("#!/bin/sh\necho test asset for " + f.Name + "\n"))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		out.Close()
	}
	return dir
}

// cdkContext is the context of cdk.json, so the tests see what make synth
// synthesizes, plus the overrides of one test.
func cdkContext(t testing.TB, overrides map[string]any) map[string]any {
	t.Helper()
	b, err := os.ReadFile("cdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for k, v := range overrides {
		f.Context[k] = v
	}
	return f.Context
}

type synthesized struct {
	tpl assertions.Template
	res map[string]resource // logical id -> resource
}

type resource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
	DependsOn  any            `json:"DependsOn"`
}

func synth(t testing.TB, overrides map[string]any) synthesized {
	t.Helper()
	ctx := cdkContext(t, overrides)
	if _, ok := overrides["assetDir"]; !ok {
		ctx["assetDir"] = assetDir(t)
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
	s, err := SettingsFrom(app.Node())
	if err != nil {
		t.Fatal(err)
	}
	stack, err := NewRelayStack(app, s)
	if err != nil {
		t.Fatal(err)
	}
	tpl := assertions.Template_FromStack(stack, nil)
	raw, err := json.Marshal(tpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]resource `json:"Resources"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return synthesized{tpl: tpl, res: doc.Resources}
}

var (
	defOnce sync.Once
	def     synthesized
)

// defaultStack is synthesized once for all tests (a synth costs seconds).
func defaultStack(t *testing.T) synthesized {
	defOnce.Do(func() { def = synth(t, nil) })
	if def.res == nil {
		t.Fatal("default synth failed")
	}
	return def
}

func (s synthesized) ofType(typ string) map[string]resource {
	out := map[string]resource{}
	for id, r := range s.res {
		if r.Type == typ {
			out[id] = r
		}
	}
	return out
}

// ourFunctions maps function name -> logical id, found by description.
func (s synthesized) ourFunctions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id, r := range s.ofType("AWS::Lambda::Function") {
		if d, _ := r.Properties["Description"].(string); strings.HasPrefix(d, "buzz relay ") {
			out[strings.TrimPrefix(d, "buzz relay ")] = id
		}
	}
	if len(out) != len(Functions) {
		t.Fatalf("found functions %v, want %d", out, len(Functions))
	}
	return out
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestEveryFunctionIsArm64ProvidedAL2023InTheVPC(t *testing.T) {
	s := defaultStack(t)
	ours := s.ourFunctions(t)
	isOurs := map[string]bool{}
	for _, id := range ours {
		isOurs[id] = true
	}
	for id, r := range s.ofType("AWS::Lambda::Function") {
		if !isOurs[id] {
			// The only other function is aws-cdk-lib's own provider behind
			// the Trigger custom resource (Node.js, written by CDK).
			if !strings.HasPrefix(id, "AWSCDKTriggerCustomResourceProvider") {
				t.Errorf("unexpected function %s: %s", id, js(r.Properties))
			}
			continue
		}
		p := r.Properties
		if p["Runtime"] != "provided.al2023" || js(p["Architectures"]) != `["arm64"]` || p["Handler"] != "bootstrap" {
			t.Errorf("%s: runtime %v arch %v handler %v", id, p["Runtime"], p["Architectures"], p["Handler"])
		}
		if vc, _ := p["VpcConfig"].(map[string]any); vc == nil || len(vc["SubnetIds"].([]any)) != 2 {
			t.Errorf("%s: not in the VPC's two app subnets: %s", id, js(p["VpcConfig"]))
		}
		if !strings.Contains(js(p["LoggingConfig"]), `"LogFormat":"JSON"`) {
			t.Errorf("%s: logging config %s", id, js(p["LoggingConfig"]))
		}
	}
	// Same facts through the assertions matchers.
	s.tpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), map[string]any{}) // parses
	s.tpl.ResourcePropertiesCountIs(jsii.String("AWS::Lambda::Function"), map[string]any{
		"Runtime":       "provided.al2023",
		"Architectures": []any{"arm64"},
	}, jsii.Number(float64(len(Functions))))
}

func TestEnvironment(t *testing.T) {
	s := defaultStack(t)
	for name, id := range s.ourFunctions(t) {
		env := s.res[id].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		var f Function
		for _, g := range Functions {
			if g.Name == name {
				f = g
			}
		}
		for k, want := range map[string]string{"BUZZ_COMMUNITY": "default", "BUZZ_PUBLIC_SCHEME": "https", "DB_MAX_CONNS": "2", "LOG_LEVEL": "info"} {
			if env[k] != want {
				t.Errorf("%s: %s=%v, want %s", name, k, env[k], want)
			}
		}
		if !strings.Contains(js(env["DB_SECRET_ARN"]), "DbSecretAttachment") {
			t.Errorf("%s: DB_SECRET_ARN %s", name, js(env["DB_SECRET_ARN"]))
		}
		if f.Signs != (env["RELAY_SIGNER"] == "kms") || f.Signs != (env["RELAY_KEY_SSM_PARAMETER"] == "/buzz/default/relay-key") ||
			f.Signs != strings.Contains(js(env["RELAY_KMS_KEY_ID"]), "RelayKeyKek") {
			t.Errorf("%s: signer env %s", name, js(env))
		}
		ws := js(env["WS_MANAGEMENT_ENDPOINT"])
		if f.Posts != (strings.Contains(ws, `"https://"`) && strings.Contains(ws, "WsApi") && strings.Contains(ws, ".execute-api.") && strings.Contains(ws, "/live")) {
			t.Errorf("%s: WS_MANAGEMENT_ENDPOINT %s", name, ws)
		}
	}
	for _, name := range []string{"ingest", "ws-message"} {
		found := false
		for _, f := range Functions {
			found = found || (f.Name == name && f.Posts)
		}
		if !found {
			t.Errorf("%s must post to connections", name)
		}
	}
}

func TestRoutes(t *testing.T) {
	s := defaultStack(t)
	fn := s.ourFunctions(t)
	want := map[string]string{
		"POST /events": "ingest", "POST /query": "query", "POST /count": "query",
		"GET /": "query", "GET /healthz": "query",
		"$connect": "ws-connect", "$default": "ws-message", "$disconnect": "ws-disconnect",
	}
	got := map[string]string{}
	integ := s.ofType("AWS::ApiGatewayV2::Integration")
	for id, r := range s.ofType("AWS::ApiGatewayV2::Route") {
		key := r.Properties["RouteKey"].(string)
		target := js(r.Properties["Target"])
		for iid, ir := range integ {
			if strings.Contains(target, `"`+iid+`"`) {
				for name, fid := range fn {
					if strings.Contains(js(ir.Properties["IntegrationUri"]), `"`+fid+`"`) {
						got[key] = name
					}
				}
			}
		}
		if got[key] == "" {
			t.Errorf("route %s (%s) reaches no function of ours", key, id)
		}
	}
	if js(got) != js(want) {
		t.Errorf("routes %v\nwant   %v", got, want)
	}
	s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
		"StageName": WebSocketStageName, "AutoDeploy": true,
	})
	s.tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Api"), jsii.Number(2))
	s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{"ProtocolType": "WEBSOCKET"})
	s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{"ProtocolType": "HTTP"})
}

// statements returns every IAM statement of the template with the roles its
// policy is attached to.
func (s synthesized) statements() (out []map[string]any, roles [][]string) {
	for _, r := range s.ofType("AWS::IAM::Policy") {
		doc := r.Properties["PolicyDocument"].(map[string]any)
		var rs []string
		for _, x := range r.Properties["Roles"].([]any) {
			rs = append(rs, js(x))
		}
		for _, st := range doc["Statement"].([]any) {
			out = append(out, st.(map[string]any))
			roles = append(roles, rs)
		}
	}
	// Inline policies of roles (the Trigger provider's role has one).
	for id, r := range s.ofType("AWS::IAM::Role") {
		pols, _ := r.Properties["Policies"].([]any)
		for _, p := range pols {
			doc := p.(map[string]any)["PolicyDocument"].(map[string]any)
			for _, st := range doc["Statement"].([]any) {
				out = append(out, st.(map[string]any))
				roles = append(roles, []string{`{"Ref":"` + id + `"}`})
			}
		}
	}
	return out, roles
}

func asList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, js(e))
		}
		return out
	}
	return []string{js(v)}
}

func TestKMSGrantIsDecryptOnTheOneKeyWithContext(t *testing.T) {
	s := defaultStack(t)
	fn := s.ourFunctions(t)
	sts, roles := s.statements()
	granted := map[string]bool{}
	for i, st := range sts {
		acts := asList(st["Action"])
		if !strings.Contains(js(acts), "kms:") {
			continue
		}
		if js(acts) != `["kms:Decrypt"]` {
			t.Errorf("KMS statement allows %v, want only kms:Decrypt", acts)
		}
		if res := js(st["Resource"]); !strings.Contains(res, "RelayKeyKek") || strings.Contains(res, `"*"`) {
			t.Errorf("KMS statement on %s, want the relay key only", res)
		}
		if c := js(st["Condition"]); c != `{"StringEquals":{"kms:EncryptionContext:community":"default"}}` {
			t.Errorf("KMS statement condition %s", c)
		}
		for _, r := range roles[i] {
			for name, id := range fn {
				if strings.Contains(r, strings.TrimSuffix(id, id[len(id)-8:])+"ServiceRole") {
					granted[name] = true
				}
			}
		}
	}
	want := map[string]bool{}
	for _, f := range Functions {
		if f.Signs {
			want[f.Name] = true
		}
	}
	if js(granted) != js(want) {
		t.Errorf("kms:Decrypt granted to %v, want %v", granted, want)
	}
	s.tpl.HasResourceProperties(jsii.String("AWS::KMS::Key"), map[string]any{"EnableKeyRotation": true})
	s.tpl.HasResource(jsii.String("AWS::KMS::Key"), map[string]any{"DeletionPolicy": "Retain"})
	s.tpl.HasResourceProperties(jsii.String("AWS::KMS::Alias"), map[string]any{"AliasName": "alias/buzz-default-relay"})
}

func TestNoWildcardIAM(t *testing.T) {
	s := defaultStack(t)
	sts, _ := s.statements()
	sawWS := 0
	for _, st := range sts {
		acts, res := js(st["Action"]), asList(st["Resource"])
		if strings.Contains(acts, `"*"`) || strings.HasSuffix(acts, `:*"`) {
			t.Errorf("wildcard action: %s", js(st))
		}
		for _, r := range res {
			if r == "*" || r == `"*"` {
				t.Errorf("wildcard resource: %s", js(st))
			}
		}
		if strings.Contains(acts, "execute-api") {
			sawWS++
			if acts != `"execute-api:ManageConnections"` {
				t.Errorf("WebSocket statement actions %s", acts)
			}
			for _, r := range res {
				if !strings.Contains(r, `{"Ref":"WsApi`) || !strings.Contains(r, "/live/*/@connections/*") {
					t.Errorf("WebSocket statement resource %s: want this API's live stage only", r)
				}
			}
		}
		if strings.Contains(acts, "ssm:") {
			if acts != `"ssm:GetParameter"` || len(res) != 1 || !strings.Contains(res[0], "parameter/buzz/default/relay-key") {
				t.Errorf("SSM statement %s", js(st))
			}
		}
	}
	if sawWS != 2 { // ingest and ws-message
		t.Errorf("%d ManageConnections statements, want 2", sawWS)
	}
}

func TestDatabaseIsPrivate(t *testing.T) {
	s := defaultStack(t)
	s.tpl.HasResourceProperties(jsii.String("AWS::RDS::DBCluster"), map[string]any{
		"Engine":           "aurora-postgresql",
		"EngineVersion":    assertions.Match_StringLikeRegexp(jsii.String(`^16\.`)),
		"StorageEncrypted": true,
		"ServerlessV2ScalingConfiguration": map[string]any{
			"MinCapacity": map[string]any{"Ref": "DbMinCapacity"},
			"MaxCapacity": map[string]any{"Ref": "DbMaxCapacity"},
		},
	})
	s.tpl.HasParameter(jsii.String("DbMinCapacity"), map[string]any{"Type": "Number", "Default": 0})
	s.tpl.ResourceCountIs(jsii.String("AWS::RDS::DBInstance"), jsii.Number(1))
	s.tpl.AllResourcesProperties(jsii.String("AWS::RDS::DBInstance"), map[string]any{"PubliclyAccessible": false})

	// The subnet group holds only isolated subnets, whose route tables have no
	// route at all (no internet gateway, no NAT).
	var groups []resource
	for _, r := range s.ofType("AWS::RDS::DBSubnetGroup") {
		groups = append(groups, r)
	}
	if len(groups) != 1 {
		t.Fatalf("%d DB subnet groups", len(groups))
	}
	for _, id := range asList(groups[0].Properties["SubnetIds"]) {
		if !regexp.MustCompile(`"Ref":"Vpcdb`).MatchString(id) {
			t.Errorf("DB subnet %s is not an isolated (db) subnet", id)
		}
	}
	for id, r := range s.ofType("AWS::EC2::Route") {
		if strings.Contains(js(r.Properties["RouteTableId"]), "Vpcdb") {
			t.Errorf("isolated subnet route %s: %s", id, js(r.Properties))
		}
	}
	// Postgres is reachable from the functions' security group only.
	for id, r := range s.ofType("AWS::EC2::SecurityGroupIngress") {
		p := r.Properties
		if p["CidrIp"] != nil || p["CidrIpv6"] != nil {
			t.Errorf("ingress %s open to an address range: %s", id, js(p))
		}
		if js(p["FromPort"]) == "5432" && !strings.Contains(js(p["SourceSecurityGroupId"]), "FunctionsSg") {
			t.Errorf("Postgres ingress %s not from the functions: %s", id, js(p))
		}
	}
	for id, r := range s.ofType("AWS::EC2::SecurityGroup") {
		if in := r.Properties["SecurityGroupIngress"]; in != nil && strings.Contains(js(in), "0.0.0.0/0") {
			t.Errorf("security group %s open to the world: %s", id, js(in))
		}
	}
}

func TestTriggerRunsMigrationsBeforeHandlers(t *testing.T) {
	s := defaultStack(t)
	fn := s.ourFunctions(t)
	var trig string
	for id, r := range s.res {
		if r.Type == "Custom::Trigger" {
			trig = id
			// The trigger invokes the function's current version.
			if !strings.Contains(js(r.Properties["HandlerArn"]), `"`+fn["migrate"][:len(fn["migrate"])-8]+"CurrentVersion") {
				t.Errorf("trigger runs %s, want migrate", js(r.Properties["HandlerArn"]))
			}
			deps := js(r.DependsOn)
			if !strings.Contains(deps, `"Db`) {
				t.Errorf("trigger does not wait for the database: %s", deps)
			}
		}
	}
	if trig == "" {
		t.Fatal("no Custom::Trigger")
	}
	for name, id := range fn {
		deps := js(s.res[id].DependsOn)
		if name != "migrate" && !strings.Contains(deps, `"`+trig+`"`) {
			t.Errorf("%s does not wait for the migration trigger: %s", name, deps)
		}
	}
}

func TestLogsAndAlarms(t *testing.T) {
	s := defaultStack(t)
	fn := s.ourFunctions(t)
	s.tpl.ResourcePropertiesCountIs(jsii.String("AWS::Logs::LogGroup"), map[string]any{"RetentionInDays": 30}, jsii.Number(float64(len(Functions))))
	alarms := map[string]bool{}
	for _, r := range s.ofType("AWS::CloudWatch::Alarm") {
		p := r.Properties
		if !strings.Contains(js(p["AlarmActions"]), "Alarms") {
			t.Errorf("alarm without action: %s", js(p))
		}
		for name, id := range fn {
			if strings.Contains(js(p["Dimensions"]), `"`+id+`"`) {
				alarms[name+"/"+p["MetricName"].(string)] = true
			}
		}
	}
	var missing []string
	for name := range fn {
		for _, m := range []string{"Errors", "Throttles"} {
			if !alarms[name+"/"+m] {
				missing = append(missing, name+"/"+m)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("missing alarms: %v", missing)
	}
}

func TestEgressDefaultIsOneNATGateway(t *testing.T) {
	s := defaultStack(t)
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(1))
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::VPCEndpoint"), jsii.Number(0))
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::Instance"), jsii.Number(0))
}

func TestVariantNATInstanceKMSEndpointInlineCiphertext(t *testing.T) {
	s := synth(t, map[string]any{
		"community":          "buzz.example",
		"egress":             "nat-instance",
		"kmsEndpoint":        true,
		"relayKeyCiphertext": "AQIDBA==",
		"relayKeyRevision":   "2",
	})
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(0))
	s.tpl.HasResourceProperties(jsii.String("AWS::EC2::Instance"), map[string]any{"InstanceType": "t4g.nano"})
	s.tpl.HasResourceProperties(jsii.String("AWS::EC2::VPCEndpoint"), map[string]any{
		"PrivateDnsEnabled": true,
		"VpcEndpointType":   "Interface",
	})
	for id, r := range s.ofType("AWS::EC2::VPCEndpoint") {
		if !strings.Contains(js(r.Properties["ServiceName"]), `".kms"`) {
			t.Errorf("endpoint %s is not KMS: %s", id, js(r.Properties["ServiceName"]))
		}
	}
	for name, id := range s.ourFunctions(t) {
		env := js(s.res[id].Properties["Environment"])
		signs := false
		for _, f := range Functions {
			signs = signs || (f.Name == name && f.Signs)
		}
		if signs != strings.Contains(env, `"RELAY_KEY_CIPHERTEXT":"AQIDBA=="`) || strings.Contains(env, "RELAY_KEY_SSM_PARAMETER") {
			t.Errorf("%s env %s", name, env)
		}
		if signs != strings.Contains(env, `"RELAY_KEY_REVISION":"2"`) {
			t.Errorf("%s: RELAY_KEY_REVISION: %s", name, env)
		}
		if !strings.Contains(env, `"BUZZ_COMMUNITY":"buzz.example"`) {
			t.Errorf("%s env %s", name, env)
		}
	}
	sts, _ := s.statements()
	for _, st := range sts {
		if strings.Contains(js(st["Action"]), "ssm:") {
			t.Errorf("SSM grant without an SSM parameter: %s", js(st))
		}
		if strings.Contains(js(st["Action"]), "kms:") && !strings.Contains(js(st["Condition"]), `"buzz.example"`) {
			t.Errorf("KMS grant for the wrong community: %s", js(st))
		}
	}
}

func TestSettingsRejectMistakes(t *testing.T) {
	good := assetDir(t)
	for name, ctx := range map[string]map[string]any{
		"community":   {"community": "Has Space", "assetDir": good},
		"egress":      {"egress": "vpc-endpoints", "assetDir": good},
		"retention":   {"logRetentionDays": 42, "assetDir": good},
		"ciphertext":  {"relayKeyCiphertext": "%%", "assetDir": good},
		"no asset":    {"assetDir": filepath.Join(good, "nope")},
		"kmsEndpoint": {"kmsEndpoint": "yes please", "assetDir": good},
		"revision":    {"relayKeyRevision": "two words", "assetDir": good},
	} {
		c := cdkContext(t, ctx)
		app := awscdk.NewApp(&awscdk.AppProps{Context: &c})
		if _, err := SettingsFrom(app.Node()); err == nil {
			t.Errorf("%s: accepted %v", name, ctx)
		}
	}
	// A zip whose bootstrap cannot run is refused before synth.
	bad := assetDir(t)
	f, _ := os.Create(filepath.Join(bad, "query.zip"))
	zw := zip.NewWriter(f)
	w, _ := zw.Create("bootstrap") // mode 0644
	w.Write([]byte("x"))
	zw.Close()
	f.Close()
	c := cdkContext(t, map[string]any{"assetDir": bad})
	app := awscdk.NewApp(&awscdk.AppProps{Context: &c})
	s, err := SettingsFrom(app.Node())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRelayStack(app, s); err == nil || !strings.Contains(err.Error(), "not executable") {
		t.Errorf("non-executable bootstrap: %v", err)
	}
}

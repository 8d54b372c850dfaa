package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	tpl     assertions.Template
	res     map[string]resource // logical id -> resource
	migrate string              // SHA-256 of the migrate zip it used
}

type resource struct {
	Type           string         `json:"Type"`
	Properties     map[string]any `json:"Properties"`
	DependsOn      any            `json:"DependsOn"`
	DeletionPolicy string         `json:"DeletionPolicy"`
}

// newStack builds the app of ctx (writing to outdir when given) and its
// stack.
func newStack(t testing.TB, ctx map[string]any, outdir string) (awscdk.App, awscdk.Stack, Settings) {
	t.Helper()
	props := &awscdk.AppProps{Context: &ctx}
	if outdir != "" {
		props.Outdir = jsii.String(outdir)
	}
	app := awscdk.NewApp(props)
	s, err := SettingsFrom(app.Node())
	if err != nil {
		t.Fatal(err)
	}
	stack, err := NewRelayStack(app, s)
	if err != nil {
		t.Fatal(err)
	}
	return app, stack, s
}

func synth(t testing.TB, overrides map[string]any) synthesized {
	t.Helper()
	ctx := cdkContext(t, overrides)
	if _, ok := overrides["assetDir"]; !ok {
		ctx["assetDir"] = assetDir(t)
	}
	_, stack, s := newStack(t, ctx, "")
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
	h, err := zipSHA256(filepath.Join(s.AssetDir, "migrate.zip"))
	if err != nil {
		t.Fatal(err)
	}
	return synthesized{tpl: tpl, res: doc.Resources, migrate: h}
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
	want := len(Deployed(Settings{}))
	if _, ok := out["ws-authorize"]; ok { // a stack with -c hostnames
		want = len(Functions)
	}
	if len(out) != want {
		t.Fatalf("found functions %v, want %d", out, want)
	}
	return out
}

// functionRouteTables are the route tables of the functions' subnets
// (logical ids, as the routes and endpoints refer to them).
func (s synthesized) functionRouteTables(t *testing.T) map[string]bool {
	t.Helper()
	tables := map[string]bool{}
	for name, id := range s.ourFunctions(t) {
		if fnByName(name).OutsideVPC() {
			continue // the push dialer (TestPushDialerOutsideTheVPC)
		}
		for _, sub := range asList(s.res[id].Properties["VpcConfig"].(map[string]any)["SubnetIds"]) {
			for _, a := range s.ofType("AWS::EC2::SubnetRouteTableAssociation") {
				if js(a.Properties["SubnetId"]) == sub {
					tables[js(a.Properties["RouteTableId"])] = true
				}
			}
		}
	}
	return tables
}

// providerFrameworks are the logical id prefixes of the custom resource
// provider frameworks' onEvent functions, one per custom resource (each
// with a log group of its own).
var providerFrameworks = []string{"MigrateProviderframeworkonEvent", "EgressCheckProviderframeworkonEvent"}

// edgeUploadLogGroups is the log group of the AwsCustomResource that
// reads the edge upload function's version (front.go).
const edgeUploadLogGroups = 1

// awsCustomResourceHandler is the logical id of aws-cdk-lib's
// AwsCustomResource singleton function.
const awsCustomResourceHandler = "AWS679f53fac002430cb0da5b7982bd2287"

func isProviderFramework(id string) bool {
	for _, p := range providerFrameworks {
		if strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var (
	mgdOnce sync.Once
	mgd     synthesized
)

// managedStack is profile=managed, synthesized once.
func managedStack(t *testing.T) synthesized {
	mgdOnce.Do(func() { mgd = synth(t, map[string]any{"profile": "managed"}) })
	if mgd.res == nil {
		t.Fatal("managed synth failed")
	}
	return mgd
}

func fnByName(name string) Function {
	for _, f := range Functions {
		if f.Name == name {
			return f
		}
	}
	panic("no function " + name)
}

func (s synthesized) env(t *testing.T, name string) map[string]any {
	t.Helper()
	return s.res[s.ourFunctions(t)[name]].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
}

// roleOf is the logical id of the service role of one of our functions.
func roleOf(fnID string) string { return fnID[:len(fnID)-8] + "ServiceRole" }

// grantsOf is every IAM statement attached to the role of function id.
func (s synthesized) grantsOf(fnID string) []map[string]any {
	sts, roles := s.statements()
	var out []map[string]any
	for i, st := range sts {
		for _, r := range roles[i] {
			if strings.Contains(r, `"`+roleOf(fnID)) {
				out = append(out, st)
			}
		}
	}
	return out
}

func TestEveryFunctionIsArm64ProvidedAL2023InTheVPC(t *testing.T) {
	s := defaultStack(t)
	ours := s.ourFunctions(t)
	isOurs, outside := map[string]bool{}, map[string]bool{}
	for name, id := range ours {
		isOurs[id] = true
		outside[id] = fnByName(name).OutsideVPC()
	}
	for id, r := range s.ofType("AWS::Lambda::Function") {
		if !isOurs[id] {
			// The only others are aws-cdk-lib's custom resource provider
			// frameworks (Node.js, written by CDK, outside the VPC), which
			// invoke migrate and the egress check and answer CloudFormation.
			// And the flag restrictDefaultSecurityGroup's handler (CDK's,
			// outside the VPC), which empties the VPC's default group, and
			// the AwsCustomResource handler (CDK's) that reads the edge
			// upload function's version in us-east-1 at deploy (front.go).
			if !isProviderFramework(id) && !strings.HasPrefix(id, "CustomVpcRestrictDefaultSGCustomResourceProviderHandler") && !strings.HasPrefix(id, awsCustomResourceHandler) {
				t.Errorf("unexpected function %s: %s", id, js(r.Properties))
			}
			continue
		}
		p := r.Properties
		if p["Runtime"] != "provided.al2023" || js(p["Architectures"]) != `["arm64"]` || p["Handler"] != "bootstrap" {
			t.Errorf("%s: runtime %v arch %v handler %v", id, p["Runtime"], p["Architectures"], p["Handler"])
		}
		vc, _ := p["VpcConfig"].(map[string]any)
		switch {
		case outside[id]:
			// The push dialer, and it alone, runs outside the VPC.
			if vc != nil {
				t.Errorf("%s: the push dialer is in the VPC: %s", id, js(vc))
			}
		case vc == nil || len(vc["SubnetIds"].([]any)) != 2 || !strings.Contains(js(vc["SubnetIds"]), "Vpcapp"):
			t.Errorf("%s: not in the VPC's two app subnets: %s", id, js(p["VpcConfig"]))
		case vc["Ipv6AllowedForDualStack"] != true:
			// Must show: Ipv6AllowedForDualStack on the VPC functions.
			t.Errorf("%s: Ipv6AllowedForDualStack %v", id, vc["Ipv6AllowedForDualStack"])
		}
		if !strings.Contains(js(p["LoggingConfig"]), `"LogFormat":"JSON"`) {
			t.Errorf("%s: logging config %s", id, js(p["LoggingConfig"]))
		}
		if p["ReservedConcurrentExecutions"] != nil {
			t.Errorf("%s: reserved concurrency without -c reservedConcurrency", id)
		}
	}
	s.tpl.ResourcePropertiesCountIs(jsii.String("AWS::Lambda::Function"), map[string]any{
		"Runtime":       "provided.al2023",
		"Architectures": []any{"arm64"},
	}, jsii.Number(float64(len(Deployed(Settings{})))))
	// NAT profiles keep IPv4 subnets: no dual-stack flag there.
	for id, r := range managedStack(t).ofType("AWS::Lambda::Function") {
		if strings.Contains(js(r.Properties["VpcConfig"]), "Ipv6AllowedForDualStack") {
			t.Errorf("managed %s: %s", id, js(r.Properties["VpcConfig"]))
		}
	}
}

func TestEnvironment(t *testing.T) {
	s := defaultStack(t)
	for name := range s.ourFunctions(t) {
		env := s.env(t, name)
		f := fnByName(name)
		for k, want := range map[string]string{"BUZZ_COMMUNITY": "default", "BUZZ_PUBLIC_SCHEME": "https", "LOG_LEVEL": "info"} {
			if env[k] != want {
				t.Errorf("%s: %s=%v, want %s", name, k, env[k], want)
			}
		}
		switch {
		case f.Migrate:
			// Contract: migrate reads the master secret, creates the IAM
			// user and the relay key.
			if !strings.Contains(js(env["DB_SECRET_ARN"]), "DbSecretAttachment") || env["DB_IAM_USER"] != DBUser ||
				env["DB_SSLMODE"] != "require" || !strings.Contains(js(env["RELAY_KMS_KEY_ID"]), "RelayKeyKek") {
				t.Errorf("migrate env %s", js(env))
			}
		case f.NoDB:
			for k := range env {
				if strings.HasPrefix(k, "DB_") {
					t.Errorf("%s never opens the database but has %s", name, k)
				}
			}
		default:
			want := map[string]string{
				"DB_AUTH": "iam", "DB_PORT": "5432", "DB_NAME": DBName, "DB_USER": DBUser, "DB_SSLMODE": "require",
				"DB_MAX_CONNS": "2", "DB_CONNECT_TIMEOUT": DBConnectTimeout, "DB_IDLE_TIMEOUT": DBIdleTimeout,
			}
			for k, v := range want {
				if env[k] != v {
					t.Errorf("%s: %s=%v, want %s", name, k, env[k], v)
				}
			}
			if js(env["DB_HOST"]) != `{"Fn::GetAtt":["Db5D02A0A9","Endpoint.Address"]}` {
				t.Errorf("%s: DB_HOST %s", name, js(env["DB_HOST"]))
			}
			if env["DB_SECRET_ARN"] != nil {
				t.Errorf("%s: DB_SECRET_ARN with IAM auth", name)
			}
		}
		if env["RELAY_KEY_SSM_PARAMETER"] != nil {
			t.Errorf("%s: still reads the relay key from SSM", name)
		}
		if f.Signs != (env["RELAY_SIGNER"] == "kms") || (f.Signs || f.Migrate) != strings.Contains(js(env["RELAY_KMS_KEY_ID"]), "RelayKeyKek") ||
			f.Signs != (js(env["RELAY_KEY_CIPHERTEXT"]) == `{"Fn::GetAtt":["Migrate","RelayKeyCiphertext"]}`) {
			t.Errorf("%s: signer env %s", name, js(env))
		}
		ws := js(env["WS_MANAGEMENT_ENDPOINT"])
		if f.Posts != (strings.Contains(ws, `"https://"`) && strings.Contains(ws, "WsApi") && strings.Contains(ws, ".execute-api.") && strings.Contains(ws, "/live")) {
			t.Errorf("%s: WS_MANAGEMENT_ENDPOINT %s", name, ws)
		}
		// Every AWS API on its dual-stack name; never the global flag,
		// which breaks the @connections client (custom endpoint).
		kms := js(env["AWS_ENDPOINT_URL_KMS"])
		if (f.Signs || f.Migrate) != (kms == `{"Fn::Join":["",["https://kms.",{"Ref":"AWS::Region"},".api.aws"]]}`) {
			t.Errorf("%s: AWS_ENDPOINT_URL_KMS %s", name, kms)
		}
		// Secrets Manager's default endpoint is already dual-stack.
		if env["AWS_ENDPOINT_URL_SECRETS_MANAGER"] != nil {
			t.Errorf("%s: AWS_ENDPOINT_URL_SECRETS_MANAGER %v", name, env["AWS_ENDPOINT_URL_SECRETS_MANAGER"])
		}
		// BUZZ_PUBLIC_URL is the distribution's own https://<name>
		// without -c domain (TestOneHostnameByDefault).
		if env["AWS_USE_DUALSTACK_ENDPOINT"] != nil || (!f.Migrate && !strings.Contains(js(env["BUZZ_PUBLIC_URL"]), `"https://",{"Fn::GetAtt":["Edge`)) {
			t.Errorf("%s: env %s", name, js(env))
		}
	}
	for _, name := range []string{"ingest", "ws-message"} {
		if !fnByName(name).Posts {
			t.Errorf("%s must post to connections", name)
		}
	}
	// The pool closes idle connections before the server does.
	idle, err := time.ParseDuration(DBIdleTimeout)
	if err != nil || idle >= IdleSessionTimeoutMs*time.Millisecond {
		t.Errorf("DB_IDLE_TIMEOUT %s must be below idle_session_timeout %d ms", DBIdleTimeout, IdleSessionTimeoutMs)
	}
	// NAT egress: the SDK's default endpoints.
	for name := range managedStack(t).ourFunctions(t) {
		if env := js(managedStack(t).env(t, name)); strings.Contains(env, "AWS_ENDPOINT_URL") {
			t.Errorf("managed %s: %s", name, env)
		}
	}
}

func TestRoutesAndDualstackAPIs(t *testing.T) {
	s := defaultStack(t)
	fn := s.ourFunctions(t)
	want := map[string]string{
		"POST /events": "ingest", "POST /query": "query", "POST /count": "query",
		"GET /": "query", "POST /": "query", "GET /healthz": "query",
		"GET /admin": "query", "GET /admin/{file}": "query", // issue 41: the operator console
		// issue 42: Buzz's invites (mint and claim write; the rest read)
		"POST /api/invites": "ingest", "POST /api/invites/claim": "ingest", "POST /api/invites/accept-policy": "query",
		"GET /api/join-policy": "query", "GET /api/join-policy/terms": "query", "GET /api/join-policy/privacy": "query",
		"GET /invite/{code}": "query", "GET /info": "query",
		// issue 40: NIP-29 LiveKit, always routed (without -c livekitSecret
		// the discovery answers 404 and the token endpoint refuses); the
		// webhook writes the room's 39004
		"GET /.well-known/nip29/livekit": "query", "GET /.well-known/nip29/livekit/{group}": "query",
		"POST /.well-known/nip29/livekit/{group}": "query", "POST /livekit/webhook": "ingest",
		"POST /hooks/{id}": "ingest", "GET /workflows/{id}/runs": "query", "GET /workflows/{id}/runs/{run}/approvals": "query",
		"$connect": "ws-connect", "$default": "ws-message", "$disconnect": "ws-disconnect",
		// issue 52: Buzz desktop's moderation pane, admin console and GIF
		// proxy, on the function that serves NIP-86
		"DELETE /api/admin/v1/members/{pubkey}/ban":     "query",
		"DELETE /api/admin/v1/members/{pubkey}/timeout": "query",
		"DELETE /api/admin/v1/operators/{pubkey}":       "query",
		"GET /api/admin/v1/feedback":                    "query",
		"GET /api/admin/v1/feedback/{id}":               "query",
		"GET /api/admin/v1/members/restrictions":        "query",
		"GET /api/admin/v1/operators":                   "query",
		"GET /api/admin/v1/probe":                       "query",
		"GET /api/admin/v1/reports":                     "query",
		"GET /api/admin/v1/reports/{id}":                "query",
		"GET /moderation/audit":                         "query",
		"GET /moderation/reports":                       "query",
		"GET /moderation/restricted":                    "query",
		"PATCH /api/admin/v1/feedback/{id}":             "query",
		"POST /api/admin/v1/events/{id}/delete":         "query",
		"POST /api/admin/v1/members/{pubkey}/ban":       "query",
		"POST /api/admin/v1/members/{pubkey}/timeout":   "query",
		"POST /api/admin/v1/reports/{id}/resolve":       "query",
		"POST /api/admin/v1/reports/{id}/reopen":        "query",
		"POST /api/admin/v1/reports/{id}/cancel":        "query",
		// the GIF proxy's routes only with -c gifs (TestGIFsOnlyWithTheirSecret)
		"PUT /api/admin/v1/operators/{pubkey}": "query",
		// issue 52: Buzz's read-state API
		"GET /buzz/v1/me/sidebar":     "query",
		"GET /buzz/v1/me/read-state":  "query",
		"POST /buzz/v1/me/read-state": "query",
	}
	// Issue 30: the media routes (on by default).
	for _, r := range MediaRoutes {
		want[r.Method+" "+r.Path] = r.Function
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
	s.tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Api"), jsii.Number(2))
	// Must show: both APIs dualstack.
	s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{"ProtocolType": "WEBSOCKET", "IpAddressType": "dualstack"})
	s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{"ProtocolType": "HTTP", "IpAddressType": "dualstack"})
}

func TestStageThrottles(t *testing.T) {
	s := defaultStack(t)
	// Must show: throttles on both stages, defaults from Settings.
	s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
		"StageName": "$default", "AutoDeploy": true,
		"DefaultRouteSettings": map[string]any{"ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100},
	})
	s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
		"StageName": WebSocketStageName, "AutoDeploy": true,
		"DefaultRouteSettings": map[string]any{"ThrottlingRateLimit": 100, "ThrottlingBurstLimit": 200},
	})
	o := synth(t, map[string]any{"httpThrottleRate": 7, "httpThrottleBurst": 9, "wsThrottleRate": 11, "wsThrottleBurst": 13, "reservedConcurrency": 4})
	o.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
		"StageName": "$default", "DefaultRouteSettings": map[string]any{"ThrottlingRateLimit": 7, "ThrottlingBurstLimit": 9},
	})
	o.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
		"StageName": WebSocketStageName, "DefaultRouteSettings": map[string]any{"ThrottlingRateLimit": 11, "ThrottlingBurstLimit": 13},
	})
	// Opt-in reserved concurrency on every request-path function.
	for name, id := range o.ourFunctions(t) {
		rc := o.res[id].Properties["ReservedConcurrentExecutions"]
		if fnByName(name).DeployTime() != (rc == nil) || (rc != nil && js(rc) != "4") {
			t.Errorf("%s: ReservedConcurrentExecutions %v", name, rc)
		}
	}
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

func TestKMSGrantsOnTheOneKeyWithContext(t *testing.T) {
	s := defaultStack(t)
	for name, id := range s.ourFunctions(t) {
		f := fnByName(name)
		var acts []string
		for _, st := range s.grantsOf(id) {
			a := js(st["Action"])
			if !strings.Contains(a, "kms:") {
				continue
			}
			acts = append(acts, a)
			if res := js(st["Resource"]); res != `{"Fn::GetAtt":["RelayKeyKek4F79FBB1","Arn"]}` {
				t.Errorf("%s: KMS statement on %s, want the relay key only", name, res)
			}
			// Only with a community context key (any community: they are
			// added without a deploy), never pinned to one, never without.
			if c := js(st["Condition"]); c != `{"ForAllValues:StringEquals":{"kms:EncryptionContextKeys":["community"]},"Null":{"kms:EncryptionContext:community":"false"}}` {
				t.Errorf("%s: KMS statement condition %s", name, c)
			}
			if strings.Contains(js(st["Condition"]), `"default"`) {
				t.Errorf("%s: KMS condition pinned to one community: %s", name, js(st["Condition"]))
			}
		}
		want := ""
		switch {
		case f.Migrate, f.Manages:
			want = `["[\"kms:Decrypt\",\"kms:Encrypt\"]"]`
		case f.Signs:
			want = `["\"kms:Decrypt\""]`
		default:
			want = "null"
		}
		if js(acts) != want {
			t.Errorf("%s: KMS actions %s, want %s", name, js(acts), want)
		}
	}
	// community: no rotation surcharge; both profiles retain the key when
	// the stack is deleted (except when the first create rolls back): the
	// final snapshot or the retained cluster holds what it seals.
	s.tpl.HasResource(jsii.String("AWS::KMS::Key"), map[string]any{
		"DeletionPolicy": "RetainExceptOnCreate", "Properties": map[string]any{"EnableKeyRotation": false, "PendingWindowInDays": 30},
	})
	managedStack(t).tpl.HasResource(jsii.String("AWS::KMS::Key"), map[string]any{
		"DeletionPolicy": "RetainExceptOnCreate", "Properties": map[string]any{"EnableKeyRotation": true},
	})
	s.tpl.HasResourceProperties(jsii.String("AWS::KMS::Alias"), map[string]any{"AliasName": "alias/BuzzRelay-default/relay-key"})
}

// Must show: no Secrets Manager or SSM read grant on a request-path
// function when IAM auth is on, and rds-db:connect scoped to the one user.
func TestRequestPathIAMAuthOnly(t *testing.T) {
	s := defaultStack(t)
	s.tpl.HasResourceProperties(jsii.String("AWS::RDS::DBCluster"), map[string]any{"EnableIAMDatabaseAuthentication": true})
	wantUser := `{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":rds-db:",{"Ref":"AWS::Region"},":",{"Ref":"AWS::AccountId"},":dbuser:",{"Fn::GetAtt":["Db5D02A0A9","DBClusterResourceId"]},"/` + DBUser + `"]]}`
	for name, id := range s.ourFunctions(t) {
		f := fnByName(name)
		connects := 0
		for _, st := range s.grantsOf(id) {
			a := js(st["Action"])
			if strings.Contains(a, "ssm:") || (!f.Migrate && strings.Contains(a, "secretsmanager:")) {
				t.Errorf("%s: %s", name, js(st))
			}
			if strings.Contains(a, "rds-db:") {
				connects++
				if a != `"rds-db:connect"` || js(st["Resource"]) != wantUser {
					t.Errorf("%s: %s, want rds-db:connect on %s", name, js(st), wantUser)
				}
			}
		}
		if want := !f.Migrate && !f.NoDB; want != (connects == 1) {
			t.Errorf("%s: %d rds-db:connect statements", name, connects)
		}
		if f.Migrate && !strings.Contains(js(s.grantsOf(id)), "secretsmanager:GetSecretValue") {
			t.Errorf("migrate cannot read the master secret")
		}
	}
	// dbAuth=secret: the old path, and no rds-db grant.
	o := synth(t, map[string]any{"dbAuth": "secret"})
	o.tpl.HasResourceProperties(jsii.String("AWS::RDS::DBCluster"), map[string]any{"EnableIAMDatabaseAuthentication": false})
	for name, id := range o.ourFunctions(t) {
		g := js(o.grantsOf(id))
		if strings.Contains(g, "rds-db:") || fnByName(name).NoDB == strings.Contains(g, "secretsmanager:GetSecretValue") {
			t.Errorf("dbAuth=secret %s: %s", name, g)
		}
		if env := o.env(t, name); !fnByName(name).NoDB && !fnByName(name).Migrate && env["DB_AUTH"] != "secret" {
			t.Errorf("dbAuth=secret %s: DB_AUTH %v", name, env["DB_AUTH"])
		}
	}
}

func TestNoWildcardIAM(t *testing.T) {
	for _, s := range []synthesized{defaultStack(t), managedStack(t)} {
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
				t.Errorf("SSM statement %s: nothing reads SSM any more", js(st))
			}
		}
		posters := 0 // ingest, ws-message and fanout
		for _, f := range Functions {
			if f.Posts {
				posters++
			}
		}
		if sawWS != posters {
			t.Errorf("%d ManageConnections statements, want %d", sawWS, posters)
		}
	}
}

func TestDatabaseIsPrivateAndPauses(t *testing.T) {
	s := defaultStack(t)
	s.tpl.HasResourceProperties(jsii.String("AWS::RDS::DBCluster"), map[string]any{
		"Engine":           "aurora-postgresql",
		"EngineVersion":    assertions.Match_StringLikeRegexp(jsii.String(`^16\.`)),
		"StorageEncrypted": true,
		"ServerlessV2ScalingConfiguration": map[string]any{
			"MinCapacity": map[string]any{"Ref": "DbMinCapacity"},
			"MaxCapacity": map[string]any{"Ref": "DbMaxCapacity"},
		},
		// Must show: the parameter group that closes idle sessions.
		"DBClusterParameterGroupName": map[string]any{"Ref": "DbParamsC3A84CD6"},
		"DeletionProtection":          false,
	})
	s.tpl.HasResource(jsii.String("AWS::RDS::DBCluster"), map[string]any{"DeletionPolicy": "Snapshot"})
	s.tpl.HasResourceProperties(jsii.String("AWS::RDS::DBClusterParameterGroup"), map[string]any{
		"Family":     "aurora-postgresql16",
		"Parameters": map[string]any{"idle_session_timeout": strconv.Itoa(IdleSessionTimeoutMs)},
	})
	s.tpl.HasParameter(jsii.String("DbMinCapacity"), map[string]any{"Type": "Number", "Default": 0})
	s.tpl.ResourceCountIs(jsii.String("AWS::RDS::DBInstance"), jsii.Number(1))
	s.tpl.AllResourcesProperties(jsii.String("AWS::RDS::DBInstance"), map[string]any{"PubliclyAccessible": false})
	// Nothing in the stack polls the database: no canary, no health
	// check, no proxy, and the one rule (the liveness ticks, issue 37)
	// reaches a function without a database, directly and through its
	// delay queue. The one exception is issue 40's NIP-40 expiry sweep,
	// once a day (lambdas.SweepRateHours) and nothing else.
	for _, typ := range []string{"AWS::Synthetics::Canary", "AWS::Route53::HealthCheck", "AWS::RDS::DBProxy"} {
		s.tpl.ResourceCountIs(jsii.String(typ), jsii.Number(0))
	}
	sweeps := s.ofType("AWS::Scheduler::Schedule")
	if len(sweeps) != 1 {
		t.Fatalf("%d Scheduler schedules, want the expiry sweep's only", len(sweeps))
	}
	for id, r := range sweeps {
		if got := js(r.Properties["ScheduleExpression"]); got != `"rate(1 day)"` {
			t.Errorf("schedule %s runs %s, want once a day", id, got)
		}
		if tg := js(r.Properties["Target"]); !strings.Contains(tg, `"Fn::GetAtt":["`+s.ourFunctions(t)["expiry-sweep"]+`","Arn"]`) {
			t.Errorf("schedule %s targets %s, want the expiry sweep", id, tg)
		}
	}
	noDB := map[string]bool{} // function logical id -> it has no database settings and no grant
	for name, id := range s.ourFunctions(t) {
		env, grants := js(s.env(t, name)), js(s.grantsOf(id))
		noDB[id] = !strings.Contains(env, `"DB_`) && !strings.Contains(grants, "rds-db:") && !strings.Contains(grants, "secretsmanager:")
	}
	reaches := func(arn any) []string { // the functions a target ARN invokes
		m, _ := arn.(map[string]any)
		att, _ := m["Fn::GetAtt"].([]any)
		if len(att) != 2 {
			t.Fatalf("schedule target %s", js(arn))
		}
		id := att[0].(string)
		if s.res[id].Type == "AWS::Lambda::Function" {
			return []string{id}
		}
		var out []string
		for _, esm := range s.ofType("AWS::Lambda::EventSourceMapping") {
			if js(esm.Properties["EventSourceArn"]) == js(arn) {
				fn, _ := esm.Properties["FunctionName"].(map[string]any)
				out = append(out, fn["Ref"].(string))
			}
		}
		if len(out) == 0 {
			t.Errorf("schedule target %s reaches no function", id)
		}
		return out
	}
	for id, r := range s.ofType("AWS::Events::Rule") {
		targets, _ := r.Properties["Targets"].([]any)
		for _, tg := range targets {
			for _, fn := range reaches(tg.(map[string]any)["Arn"]) {
				if !noDB[fn] {
					t.Errorf("schedule %s reaches %s, which has a database", id, fn)
				}
			}
		}
	}

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
		if in := js(r.Properties["SecurityGroupIngress"]); strings.Contains(in, "0.0.0.0/0") || strings.Contains(in, "::/0") {
			t.Errorf("security group %s open to the world: %s", id, in)
		}
	}
}

// Must show: the key-creating migrate custom resource, ordered before the
// handlers.
func TestMigrateCustomResourceBeforeHandlers(t *testing.T) {
	s := defaultStack(t)
	fn := s.ourFunctions(t)
	s.tpl.ResourceCountIs(jsii.String("Custom::Trigger"), jsii.Number(0))
	crs := s.ofType(MigrateResourceType)
	if len(crs) != 1 {
		t.Fatalf("%d %s resources", len(crs), MigrateResourceType)
	}
	cr := crs["Migrate"]
	p := cr.Properties
	// The provider framework's onEvent function invokes migrate.
	token := js(p["ServiceToken"])
	if !strings.Contains(token, "MigrateProviderframeworkonEvent") {
		t.Errorf("ServiceToken %s", token)
	}
	var onEvent resource
	for id, r := range s.ofType("AWS::Lambda::Function") {
		if strings.HasPrefix(id, "MigrateProviderframeworkonEvent") {
			onEvent = r
		}
	}
	if env := js(onEvent.Properties["Environment"]); !strings.Contains(env, `"USER_ON_EVENT_FUNCTION_ARN":{"Fn::GetAtt":["`+fn["migrate"]+`","Arn"]}`) {
		t.Errorf("provider does not call migrate: %s", env)
	}
	if p["Community"] != "default" || p["RelayKeyRevision"] != "1" || p["MigrateZipSha256"] != s.migrate || len(s.migrate) != 64 ||
		!strings.Contains(js(p["RelayKmsKeyId"]), "RelayKeyKek") {
		t.Errorf("custom resource properties %s", js(p))
	}
	if deps := js(cr.DependsOn); !strings.Contains(deps, `"Db5D02A0A9"`) || !strings.Contains(deps, `"Dbwriter`) {
		t.Errorf("migrate does not wait for the database: %s", deps)
	}
	for name, id := range fn {
		r := s.res[id]
		if fnByName(name).DeployTime() {
			// migrate and the egress check (which runs before migrate,
			// TestEgressCheckCustomResource) run during the deployment.
			if strings.Contains(js(r), `"Migrate"`) {
				t.Errorf("%s depends on the migrate custom resource", name)
			}
			continue
		}
		if deps := js(r.DependsOn); !strings.Contains(deps, `"Migrate"`) {
			t.Errorf("%s is not ordered after the migrate custom resource: %s", name, deps)
		}
	}
	// The pubkey is an output; the ciphertext never is.
	tpl := js(s.tpl.ToJSON())
	if !strings.Contains(tpl, `"RelayPubkey":{"Description"`) || !strings.Contains(tpl, `{"Fn::GetAtt":["Migrate","RelayPubkey"]}`) {
		t.Errorf("no RelayPubkey output")
	}
	for id, o := range (*s.tpl.ToJSON())["Outputs"].(map[string]any) {
		if strings.Contains(js(o), "RelayKeyCiphertext") {
			t.Errorf("output %s exposes the ciphertext", id)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAlarmsOnlyInManaged(t *testing.T) {
	// Issue 41: the community profile has the alarms of every profile
	// (alarms_test.go: Aurora awake, HTTP 5xx, and issue 55's push given
	// up) and their topic, no function alarms.
	def := defaultStack(t)
	def.tpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(3))
	def.tpl.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(1))
	def.tpl.ResourcePropertiesCountIs(jsii.String("AWS::Logs::LogGroup"), map[string]any{"RetentionInDays": 7}, jsii.Number(float64(len(Deployed(Settings{}))+len(providerFrameworks)+edgeUploadLogGroups)))

	s := managedStack(t)
	fn := s.ourFunctions(t)
	s.tpl.ResourcePropertiesCountIs(jsii.String("AWS::Logs::LogGroup"), map[string]any{"RetentionInDays": 90}, jsii.Number(float64(len(Deployed(Settings{}))+len(providerFrameworks)+edgeUploadLogGroups)))
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
		if name == "push-sender" || name == "push-dialer" || name == "workflow-runner" {
			continue // none by design (infra/push.go, docs/workflows.md): the idle bill stays as it was; the dialer's failures end in PushFailed
		}
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

// Must show: the default synthesizes no NAT gateway and no NAT instance,
// and an egress-only internet gateway with a ::/0 route for the
// functions' subnets.
func TestDefaultEgressIsIPv6WithoutNAT(t *testing.T) {
	s := defaultStack(t)
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(0))
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::Instance"), jsii.Number(0))
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::EIP"), jsii.Number(0))
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::VPCEndpoint"), jsii.Number(1)) // DynamoDB's gateway: TestSessionTableGatewayEndpointOverIPv6
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::VPCCidrBlock"), jsii.Number(1))
	eigws := s.ofType("AWS::EC2::EgressOnlyInternetGateway")
	if len(eigws) != 1 {
		t.Fatalf("%d egress-only internet gateways", len(eigws))
	}
	var eigw string
	for id := range eigws {
		eigw = id
	}
	// The functions' subnets' route tables.
	fnTables := s.functionRouteTables(t)
	if len(fnTables) != 2 {
		t.Fatalf("functions' route tables %v", fnTables)
	}
	routed := map[string]bool{}
	for id, r := range s.ofType("AWS::EC2::Route") {
		p := r.Properties
		if !fnTables[js(p["RouteTableId"])] {
			continue
		}
		if p["DestinationIpv6CidrBlock"] != "::/0" || js(p["EgressOnlyInternetGatewayId"]) != `{"Ref":"`+eigw+`"}` {
			t.Errorf("functions' route %s: %s, want only ::/0 to the egress-only gateway", id, js(p))
		}
		routed[js(p["RouteTableId"])] = true
	}
	if len(routed) != 2 {
		t.Errorf("::/0 routes in %v, want both app route tables", routed)
	}
	// Dual-stack subnets for the functions; HTTPS out over IPv6 only.
	for _, sub := range s.ofType("AWS::EC2::Subnet") {
		if sub.Properties["Ipv6CidrBlock"] == nil {
			t.Errorf("subnet without IPv6: %s", js(sub.Properties))
		}
	}
	sg := s.res["FunctionsSgEC262FB4"].Properties
	if out := js(sg["SecurityGroupEgress"]); !strings.Contains(out, `"CidrIpv6":"::/0"`) || !strings.Contains(out, `"FromPort":443`) {
		t.Errorf("functions' egress %s", out)
	}
	// IPv4 only to 443 (the DynamoDB gateway endpoint's prefix list is
	// the only IPv4 route out, the routes above).
	rules, _ := sg["SecurityGroupEgress"].([]any)
	for _, r := range rules {
		if rule, _ := r.(map[string]any); rule["CidrIp"] != nil && (js(rule["FromPort"]) != "443" || js(rule["ToPort"]) != "443") {
			t.Errorf("functions' IPv4 egress %s", js(rule))
		}
	}
}

// Must show: over egress=ipv6 (no NAT) the functions reach the session
// table through a DynamoDB gateway endpoint on their own subnets' route
// tables, and the egress check opens DynamoDB over IPv4 at the SDK's
// default name (the functions' environment names none).
func TestSessionTableGatewayEndpointOverIPv6(t *testing.T) {
	s := defaultStack(t)
	eps := s.ofType("AWS::EC2::VPCEndpoint")
	if len(eps) != 1 {
		t.Fatalf("%d VPC endpoints", len(eps))
	}
	fnTables := s.functionRouteTables(t)
	for id, ep := range eps {
		p := ep.Properties
		if p["VpcEndpointType"] != "Gateway" || !strings.Contains(js(p["ServiceName"]), ".dynamodb") {
			t.Errorf("endpoint %s: %s", id, js(p))
		}
		got := map[string]bool{}
		for _, rt := range asList(p["RouteTableIds"]) {
			got[rt] = true
		}
		if len(got) != len(fnTables) || len(got) == 0 {
			t.Errorf("endpoint %s on %v, want the functions' route tables %v", id, got, fnTables)
		}
		for rt := range fnTables {
			if !got[rt] {
				t.Errorf("functions' route table %s has no DynamoDB route", rt)
			}
		}
	}
	ddb := s.endpointsOf(t)["DynamoDB"]
	if ddb == nil || ddb["Network"] != "tcp4" || !strings.Contains(js(ddb["Url"]), "https://dynamodb.") || !strings.Contains(js(ddb["Url"]), ".amazonaws.com") {
		t.Errorf("egress check of DynamoDB: %s", js(ddb))
	}
	for _, fn := range []string{"ingest", "ws-message", "ws-disconnect"} {
		if v, ok := s.env(t, fn)["AWS_ENDPOINT_URL_DYNAMODB"]; ok {
			t.Errorf("%s names a DynamoDB endpoint %s: the default name goes through the gateway endpoint", fn, js(v))
		}
	}
}

// Must show: profile=managed has a NAT.
func TestManagedProfile(t *testing.T) {
	s := managedStack(t)
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(1))
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::EgressOnlyInternetGateway"), jsii.Number(0))
	s.tpl.HasResourceProperties(jsii.String("AWS::RDS::DBCluster"), map[string]any{"DeletionProtection": true})
	s.tpl.HasResource(jsii.String("AWS::RDS::DBCluster"), map[string]any{"DeletionPolicy": "RetainExceptOnCreate", "UpdateReplacePolicy": "Retain"})
	s.tpl.HasResource(jsii.String("AWS::SecretsManager::Secret"), map[string]any{"DeletionPolicy": "RetainExceptOnCreate"})
	s.tpl.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(1))
	if !strings.Contains(js(s.tpl.ToJSON()), `"AlarmTopicArn"`) {
		t.Error("no AlarmTopicArn output")
	}
	// Every -c setting still overrides the profile.
	o := synth(t, map[string]any{"profile": "managed", "egress": "ipv6", "deletionProtection": false, "logRetentionDays": 14, "alarms": false})
	o.tpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(0))
	o.tpl.ResourceCountIs(jsii.String("AWS::EC2::EgressOnlyInternetGateway"), jsii.Number(1))
	o.tpl.HasResourceProperties(jsii.String("AWS::RDS::DBCluster"), map[string]any{"DeletionProtection": false})
	o.tpl.HasResource(jsii.String("AWS::RDS::DBCluster"), map[string]any{"DeletionPolicy": "RetainExceptOnCreate"})
	o.tpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(3)) // every profile's three (issue 41's two, issue 55's push-failed)
	o.tpl.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), map[string]any{"RetentionInDays": 14})
}

func TestVariantHardenedNATInstanceKMSEndpoint(t *testing.T) {
	s := synth(t, map[string]any{
		"community":        "buzz.example",
		"egress":           "nat-instance",
		"kmsEndpoint":      true,
		"relayKeyRevision": "2",
	})
	s.tpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(0))
	s.tpl.HasResourceProperties(jsii.String("AWS::EC2::Instance"), map[string]any{"InstanceType": "t4g.nano", "SourceDestCheck": false})
	// IMDSv2 required (through a launch template).
	s.tpl.HasResourceProperties(jsii.String("AWS::EC2::LaunchTemplate"), map[string]any{
		"LaunchTemplateData": map[string]any{"MetadataOptions": map[string]any{"HttpTokens": "required"}},
	})
	// Inbound only from the VPC's own range.
	for id, r := range s.ofType("AWS::EC2::SecurityGroup") {
		in := js(r.Properties["SecurityGroupIngress"])
		if strings.Contains(in, "0.0.0.0/0") || strings.Contains(in, "::/0") {
			t.Errorf("security group %s open to the world: %s", id, in)
		}
		if strings.Contains(js(r.Properties["GroupDescription"]), "NAT") && in != `[{"CidrIp":{"Fn::GetAtt":["Vpc8378EB38","CidrBlock"]},"Description":"forward traffic from inside the VPC only","IpProtocol":"-1"}]` {
			t.Errorf("NAT security group ingress %s", in)
		}
	}
	// Patched through Systems Manager, recovered by an alarm.
	found := false
	for _, r := range s.ofType("AWS::IAM::Role") {
		if strings.Contains(js(r.Properties["ManagedPolicyArns"]), "AmazonSSMManagedInstanceCore") {
			found = true
		}
	}
	if !found {
		t.Error("NAT instance role without AmazonSSMManagedInstanceCore")
	}
	s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
		"MetricName":   "StatusCheckFailed_System",
		"Namespace":    "AWS/EC2",
		"AlarmActions": []any{map[string]any{"Fn::Join": []any{"", []any{"arn:", map[string]any{"Ref": "AWS::Partition"}, ":automate:", map[string]any{"Ref": "AWS::Region"}, ":ec2:recover"}}}},
	})
	s.tpl.HasResourceProperties(jsii.String("AWS::EC2::VPCEndpoint"), map[string]any{
		"PrivateDnsEnabled": true,
		"VpcEndpointType":   "Interface",
	})
	for id, r := range s.ofType("AWS::EC2::VPCEndpoint") {
		if !strings.Contains(js(r.Properties["ServiceName"]), `".kms"`) {
			t.Errorf("endpoint %s is not KMS: %s", id, js(r.Properties["ServiceName"]))
		}
	}
	for name := range s.ourFunctions(t) {
		env := js(s.env(t, name))
		f := fnByName(name)
		if f.Signs != strings.Contains(env, `"RELAY_KEY_REVISION":"2"`) || !strings.Contains(env, `"BUZZ_COMMUNITY":"buzz.example"`) {
			t.Errorf("%s env %s", name, env)
		}
	}
	if p := s.res["Migrate"].Properties; p["RelayKeyRevision"] != "2" || p["Community"] != "buzz.example" {
		t.Errorf("migrate properties %s", js(p))
	}
	sts, _ := s.statements()
	for _, st := range sts {
		// Issue 13: the grant is no longer pinned to the stack's community
		// (more are added without a deploy); it still needs the community
		// context key.
		if c := js(st["Condition"]); strings.Contains(js(st["Action"]), "kms:") &&
			(strings.Contains(c, `"buzz.example"`) || !strings.Contains(c, `"kms:EncryptionContextKeys":["community"]`)) {
			t.Errorf("KMS grant without the community context-key condition: %s", js(st))
		}
	}
}

func TestDomainAndBudget(t *testing.T) {
	cert := "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
	s := synth(t, map[string]any{"domain": "relay.example.com", "certificateArn": cert, "budgetUSD": 5, "alarmEmail": "ops@example.com"})
	s.tpl.HasResourceProperties(jsii.String("AWS::CloudFront::Distribution"), map[string]any{
		"DistributionConfig": assertions.Match_ObjectLike(&map[string]any{
			"Aliases":           []any{"relay.example.com"},
			"IPV6Enabled":       true,
			"ViewerCertificate": assertions.Match_ObjectLike(&map[string]any{"AcmCertificateArn": cert}),
		}),
	})
	var dist map[string]any
	for _, r := range s.ofType("AWS::CloudFront::Distribution") {
		dist = r.Properties["DistributionConfig"].(map[string]any)
	}
	d := js(dist)
	for _, want := range []string{`"Id":"http-api"`, `"Id":"ws-api"`, `"PathPattern":"/live"`, `"TargetOriginId":"ws-api"`, `"TargetOriginId":"http-api"`, `"EventType":"viewer-request"`} {
		if !strings.Contains(d, want) {
			t.Errorf("distribution lacks %s: %s", want, d)
		}
	}
	var code string
	for _, r := range s.ofType("AWS::CloudFront::Function") {
		code = r.Properties["FunctionCode"].(string)
		if js(r.Properties["FunctionConfig"]) != `{"Comment":"buzz relay: WebSocket upgrades to the WebSocket API","Runtime":"cloudfront-js-2.0"}` {
			t.Errorf("function config %s", js(r.Properties["FunctionConfig"]))
		}
	}
	if !strings.Contains(code, "selectRequestOriginById('ws-api')") || !strings.Contains(code, "'websocket'") {
		t.Errorf("router code %s", code)
	}
	for name := range s.ourFunctions(t) {
		env := s.env(t, name)
		if f := fnByName(name); !f.Migrate && env["BUZZ_PUBLIC_URL"] != "https://relay.example.com" {
			t.Errorf("%s: BUZZ_PUBLIC_URL %v", name, env["BUZZ_PUBLIC_URL"])
		} else if f.Migrate && env["BUZZ_COMMUNITY_HOST"] != "relay.example.com" {
			t.Errorf("migrate: BUZZ_COMMUNITY_HOST %v", env["BUZZ_COMMUNITY_HOST"])
		}
	}
	s.tpl.HasResourceProperties(jsii.String("AWS::Budgets::Budget"), map[string]any{
		"Budget": map[string]any{"BudgetName": map[string]any{"Fn::Join": []any{"", []any{"BuzzRelay-default-", map[string]any{"Ref": "AWS::Region"}}}}, "BudgetType": "COST", "TimeUnit": "MONTHLY", "BudgetLimit": map[string]any{"Amount": 5, "Unit": "USD"}},
		"NotificationsWithSubscribers": assertions.Match_ArrayWith(&[]any{map[string]any{
			"Notification": map[string]any{"NotificationType": "FORECASTED", "ComparisonOperator": "GREATER_THAN", "Threshold": 100, "ThresholdType": "PERCENTAGE"},
			"Subscribers":  assertions.Match_ArrayWith(&[]any{map[string]any{"SubscriptionType": "EMAIL", "Address": "ops@example.com"}}),
		}}),
	})
	// Without a domain the distribution is still there, on its own name
	// (TestOneHostnameByDefault).
	defaultStack(t).tpl.ResourceCountIs(jsii.String("AWS::CloudFront::Distribution"), jsii.Number(1))
	synth(t, map[string]any{"budgetUSD": 0}).tpl.ResourceCountIs(jsii.String("AWS::Budgets::Budget"), jsii.Number(0))
}

// Must show: the template is byte-stable between two synths (no map-order
// churn), for both profiles and the options that add resources.
func TestSynthIsByteStable(t *testing.T) {
	dir := assetDir(t)
	cert := "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
	for _, o := range []map[string]any{
		{},
		{"profile": "managed", "domain": "relay.example.com", "certificateArn": cert, "budgetUSD": 5, "alarmEmail": "ops@example.com", "reservedConcurrency": 3},
		{"egress": "nat-instance", "kmsEndpoint": true},
	} {
		var first []byte
		for i := 0; i < 2; i++ {
			ctx := cdkContext(t, o)
			ctx["assetDir"] = dir
			app, stack, _ := newStack(t, ctx, t.TempDir())
			asm := app.Synth(nil)
			b := mustRead(t, filepath.Join(*asm.Directory(), *stack.TemplateFile()))
			if i == 0 {
				first = b
			} else if !bytes.Equal(first, b) {
				t.Errorf("%v: two synths differ (%d and %d bytes)", o, len(first), len(b))
			}
		}
	}
}

func TestSettingsRejectMistakes(t *testing.T) {
	good := assetDir(t)
	for name, ctx := range map[string]map[string]any{
		"profile":                  {"profile": "enterprise"},
		"community":                {"community": "Has Space"},
		"egress":                   {"egress": "vpc-endpoints"},
		"retention":                {"logRetentionDays": 42},
		"ciphertext":               {"relayKeyCiphertext": "AQIDBA=="},
		"no asset":                 {"assetDir": filepath.Join(good, "nope")},
		"kmsEndpoint":              {"kmsEndpoint": "yes please"},
		"revision":                 {"relayKeyRevision": "two words"},
		"dbAuth":                   {"dbAuth": "password"},
		"throttle":                 {"httpThrottleRate": 0},
		"reserved":                 {"reservedConcurrency": 2.5},
		"no awake hours":           {"dbAwakeHours": 0},
		"awake all day":            {"dbAwakeHours": 24},
		"bad mail":                 {"alarmEmail": "nobody"},
		"domain only":              {"domain": "relay.example.com"},
		"cert region":              {"domain": "relay.example.com", "certificateArn": "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789"},
		"domain upper":             {"domain": "Relay.Example.com", "certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789"},
		"hostnames without domain": {"hostnames": "bees.example.org"},
		"hostname upper":           {"domain": "relay.example.com", "certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789", "hostnames": "Bees.Example.org"},
		"hostname is domain":       {"domain": "relay.example.com", "certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789", "hostnames": "relay.example.com"},
	} {
		if _, ok := ctx["assetDir"]; !ok {
			ctx["assetDir"] = good
		}
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

// The fan-out function: invoked asynchronously (two retries, a bounded
// event age) by ingest and ws-message, which get its name and
// lambda:InvokeFunction on it, and by itself (the other parts of an
// audience it splits); nothing else gets that grant; it posts to
// connections and signs nothing.
func TestFanoutFunctionWiring(t *testing.T) {
	s := defaultStack(t)
	fns := s.ourFunctions(t)
	fanoutID, ok := fns["fanout"]
	if !ok {
		t.Fatal("no fanout function")
	}
	s.tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventInvokeConfig"), map[string]any{
		"FunctionName":             map[string]any{"Ref": fanoutID},
		"MaximumRetryAttempts":     FanoutRetryAttempts,
		"MaximumEventAgeInSeconds": FanoutMaxEventAgeMinutes * 60,
	})
	if g := js(s.grantsOf(fanoutID)); !strings.Contains(g, "execute-api:ManageConnections") || strings.Contains(g, "kms:") {
		t.Errorf("fanout grants: %s", g)
	}
	for name, id := range fns {
		f := fnByName(name)
		env := s.env(t, name)
		invokes := strings.Contains(js(s.grantsOf(id)), "lambda:InvokeFunction")
		// The workflow runner invokes itself (a long run's next part);
		// the push sender invokes the push dialer (TestPushDialerOutsideTheVPC).
		if want := f.Dispatches || f.Fanout || f.Greets || f.RunsWorkflows || f.SendsPush; want != invokes {
			t.Errorf("%s: lambda:InvokeFunction granted %v, want %v", name, invokes, want)
		}
		if f.Dispatches || f.Fanout || f.Greets || f.RunsWorkflows || f.SendsPush {
			if !strings.Contains(js(env["LAMBDA_ENDPOINT"]), "https://lambda.") {
				t.Errorf("%s: LAMBDA_ENDPOINT %s, want the dual-stack endpoint under egress=ipv6", name, js(env["LAMBDA_ENDPOINT"]))
			}
		}
		if f.Dispatches {
			if js(env["FANOUT_FUNCTION"]) != js(map[string]any{"Ref": fanoutID}) {
				t.Errorf("%s: FANOUT_FUNCTION %s", name, js(env["FANOUT_FUNCTION"]))
			}
		} else if env["FANOUT_FUNCTION"] != nil {
			t.Errorf("%s has FANOUT_FUNCTION", name)
		}
	}
	// The fan-out function invokes itself with the other parts of an
	// audience it splits, and no other function.
	self := js(map[string]any{"Fn::GetAtt": []any{fanoutID, "Arn"}})
	for _, st := range s.grantsOf(fanoutID) {
		if strings.Contains(js(st["Action"]), "lambda:InvokeFunction") && js(st["Resource"]) != self {
			t.Errorf("fanout may invoke %s, want only itself (%s)", js(st["Resource"]), self)
		}
	}
	for _, name := range []string{"ingest", "ws-message"} {
		if !fnByName(name).Dispatches {
			t.Errorf("%s does not dispatch to the fan-out function", name)
		}
	}
}

// Issue 13: several hostnames on one deployment, mapped by configuration:
// the distribution answers on each, CloudFront's router copies the viewer
// host into x-buzz-host, the functions read it instead of one
// BUZZ_PUBLIC_URL, and a $connect authorizer (no database, no key) hands it
// to every WebSocket event.
func TestSeveralHostnames(t *testing.T) {
	cert := "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
	s := synth(t, map[string]any{"domain": "relay.example.com", "certificateArn": cert, "hostnames": "bees.example.org,*.hives.example.net"})
	s.tpl.HasResourceProperties(jsii.String("AWS::CloudFront::Distribution"), map[string]any{
		"DistributionConfig": assertions.Match_ObjectLike(&map[string]any{
			"Aliases": []any{"relay.example.com", "bees.example.org", "*.hives.example.net"},
		}),
	})
	for _, r := range s.ofType("AWS::CloudFront::Function") {
		if code := r.Properties["FunctionCode"].(string); !strings.Contains(code, "req.headers['x-buzz-host'] = { value: req.headers.host.value }") {
			t.Errorf("router code does not forward the viewer host: %s", code)
		}
	}
	fns := s.ourFunctions(t)
	for name := range fns {
		env := s.env(t, name)
		f := fnByName(name)
		if !f.Migrate && (env["BUZZ_HOST_HEADER"] != HostHeader || env["BUZZ_PUBLIC_URL"] != nil) {
			t.Errorf("%s: BUZZ_HOST_HEADER %v, BUZZ_PUBLIC_URL %v", name, env["BUZZ_HOST_HEADER"], env["BUZZ_PUBLIC_URL"])
		}
	}
	auth := fns["ws-authorize"]
	if auth == "" {
		t.Fatal("no ws-authorize function")
	}
	for _, st := range s.grantsOf(auth) {
		if a := js(st["Action"]); strings.Contains(a, "kms:") || strings.Contains(a, "rds-db:") || strings.Contains(a, "secretsmanager:") {
			t.Errorf("ws-authorize may %s", a)
		}
	}
	authorizers := s.ofType("AWS::ApiGatewayV2::Authorizer")
	if len(authorizers) != 1 {
		t.Fatalf("%d authorizers, want 1", len(authorizers))
	}
	var authID string
	for id, a := range authorizers {
		authID = id
		if a.Properties["AuthorizerType"] != "REQUEST" || js(a.Properties["IdentitySource"]) != `["route.request.header.Host"]` ||
			!strings.Contains(js(a.Properties["AuthorizerUri"]), auth) {
			t.Errorf("authorizer %s", js(a.Properties))
		}
	}
	for _, r := range s.ofType("AWS::ApiGatewayV2::Route") {
		key := r.Properties["RouteKey"].(string)
		hasAuth := strings.Contains(js(r.Properties["AuthorizerId"]), authID)
		if (key == "$connect") != hasAuth {
			t.Errorf("route %s authorizer %v", key, js(r.Properties["AuthorizerId"]))
		}
	}
	// Without hostnames nothing of this is deployed.
	if _, ok := defaultStack(t).ourFunctions(t)["ws-authorize"]; ok {
		t.Error("ws-authorize deployed without -c hostnames")
	}
	defaultStack(t).tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Authorizer"), jsii.Number(0))
}

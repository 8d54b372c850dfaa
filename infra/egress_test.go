package main

import (
	"strings"
	"testing"
)

// endpointsOf is the EgressCheck resource's Endpoints, by name prefix
// ("WebSocket", "KMS", "Lambda", "Secrets", "S3").
func (s synthesized) endpointsOf(t *testing.T) map[string]map[string]any {
	t.Helper()
	crs := s.ofType(EgressCheckResourceType)
	if len(crs) != 1 {
		t.Fatalf("%d %s resources", len(crs), EgressCheckResourceType)
	}
	out := map[string]map[string]any{}
	for _, e := range crs["EgressCheck"].Properties["Endpoints"].([]any) {
		ep := e.(map[string]any)
		out[strings.Fields(ep["Name"].(string))[0]] = ep
	}
	return out
}

// Must show: the EgressCheck custom resource, its handler in the
// functions' subnets with their security group, its order (after the
// APIs, before migrate and the stages, so before any function is used)
// and its grants.
func TestEgressCheckCustomResource(t *testing.T) {
	s := defaultStack(t)
	fn := s.ourFunctions(t)
	id := fn["egresscheck"]
	cr, ok := s.res["EgressCheck"]
	if !ok || cr.Type != EgressCheckResourceType {
		t.Fatalf("no EgressCheck custom resource: %s", js(cr))
	}
	// Through the Provider framework (outside the VPC), which answers
	// CloudFormation: the handler never needs egress to S3 to report.
	if token := js(cr.Properties["ServiceToken"]); !strings.Contains(token, `"EgressCheckProviderframeworkonEvent`) {
		t.Errorf("ServiceToken %s", token)
	}
	for fid, r := range s.ofType("AWS::Lambda::Function") {
		if strings.HasPrefix(fid, "EgressCheckProviderframeworkonEvent") {
			if env := js(r.Properties["Environment"]); env != `{"Variables":{"USER_ON_EVENT_FUNCTION_ARN":{"Fn::GetAtt":["`+id+`","Arn"]}}}` {
				t.Errorf("egress provider does not call the egress check: %s", env)
			}
			if r.Properties["VpcConfig"] != nil {
				t.Errorf("the provider framework must answer from outside the VPC: %s", js(r.Properties["VpcConfig"]))
			}
		}
	}
	// In the functions' subnets with their security group.
	p := s.res[id].Properties
	ingest := s.res[fn["ingest"]].Properties
	if js(p["VpcConfig"]) != js(ingest["VpcConfig"]) || !strings.Contains(js(p["VpcConfig"]), `"FunctionsSg`) {
		t.Errorf("egress check VpcConfig %s, want the functions' %s", js(p["VpcConfig"]), js(ingest["VpcConfig"]))
	}

	// Order.
	deps := js(cr.DependsOn)
	for _, api := range []string{"AWS::ApiGatewayV2::Api"} {
		for apiID := range s.ofType(api) {
			if !strings.Contains(deps, `"`+apiID+`"`) {
				t.Errorf("EgressCheck does not wait for %s: %s", apiID, deps)
			}
		}
	}
	if len(s.ofType("AWS::ApiGatewayV2::Api")) != 2 {
		t.Errorf("want the HTTP and the WebSocket API")
	}
	for stageID := range s.ofType("AWS::ApiGatewayV2::Stage") {
		if strings.Contains(deps, `"`+stageID+`"`) {
			t.Errorf("EgressCheck waits for stage %s, which must wait for it", stageID)
		}
		if !strings.Contains(js(s.res[stageID].DependsOn), `"EgressCheck"`) {
			t.Errorf("stage %s is served before the egress check: %s", stageID, js(s.res[stageID].DependsOn))
		}
	}
	if !strings.Contains(js(s.res["Migrate"].DependsOn), `"EgressCheck"`) {
		t.Errorf("migrate runs before the egress check: %s", js(s.res["Migrate"].DependsOn))
	}
	// Its handler waits for the app subnets' routes out (the egress
	// itself), and for nothing it checks for.
	fdeps := js(s.res[id].DependsOn)
	if !strings.Contains(fdeps, "VpcappSubnet1DefaultRoute") || !strings.Contains(fdeps, "VpcappSubnet2DefaultRoute") || strings.Contains(fdeps, "Migrate") {
		t.Errorf("egress check function DependsOn %s", fdeps)
	}

	// Grants: only its VPC network interfaces and its logs; no key, no
	// secret, no database, no @connections.
	if g := s.grantsOf(id); len(g) != 0 {
		t.Errorf("egress check has grants %s", js(g))
	}
	var role string
	for rid, r := range s.ofType("AWS::IAM::Role") {
		if strings.HasPrefix(rid, roleOf(id)) {
			role = js(r.Properties["ManagedPolicyArns"])
		}
	}
	if !strings.Contains(role, "AWSLambdaVPCAccessExecutionRole") || !strings.Contains(role, "AWSLambdaBasicExecutionRole") || strings.Count(role, ":iam::aws:policy/") != 2 {
		t.Errorf("egress check managed policies %s", role)
	}
	env := s.env(t, "egresscheck")
	for k := range env {
		if strings.HasPrefix(k, "DB_") || strings.HasPrefix(k, "RELAY_") || k == "WS_MANAGEMENT_ENDPOINT" || strings.HasPrefix(k, "MEDIA_") {
			t.Errorf("egress check env has %s", k)
		}
	}
	// The framework may invoke (and describe) the check and nothing else.
	sts, roles := s.statements()
	for i, st := range sts {
		if !strings.Contains(js(roles[i]), "EgressCheckProviderframeworkonEvent") {
			continue
		}
		if a := js(st["Action"]); (a != `"lambda:InvokeFunction"` && a != `"lambda:GetFunction"`) || strings.Count(js(st["Resource"]), `"`+id+`"`) != len(asList(st["Resource"])) {
			t.Errorf("egress provider statement %s", js(st))
		}
	}
}

// Must show: the check covers every endpoint the functions call, at the
// very names their environment gives, in the family the egress carries.
func TestEgressCheckEndpoints(t *testing.T) {
	s := defaultStack(t)
	eps := s.endpointsOf(t)
	if len(eps) != 6 {
		t.Errorf("endpoints %s", js(eps))
	}
	for name, ep := range eps {
		if name != "DynamoDB" && ep["Network"] != "tcp6" { // DynamoDB: its gateway endpoint, over IPv4
			t.Errorf("egress=ipv6: %s over %v", name, ep["Network"])
		}
	}
	url := func(name string) string { return js(eps[name]["Url"]) }
	same := func(what, env string) {
		t.Helper()
		if url(what) != env {
			t.Errorf("%s: checks %s, functions call %s", what, url(what), env)
		}
	}
	same("KMS", js(s.env(t, "query")["AWS_ENDPOINT_URL_KMS"]))
	same("Lambda", js(s.env(t, "ingest")["LAMBDA_ENDPOINT"]))
	same("S3", js(s.env(t, "query")["AWS_ENDPOINT_URL_S3"]))
	if url("Secrets") != `{"Fn::Join":["",["https://secretsmanager.",{"Ref":"AWS::Region"},".amazonaws.com"]]}` {
		t.Errorf("Secrets Manager %s", url("Secrets"))
	}
	// @connections: the host of WS_MANAGEMENT_ENDPOINT, this stack's API.
	ws := js(s.env(t, "ws-message")["WS_MANAGEMENT_ENDPOINT"])
	conn := strings.TrimSuffix(url("WebSocket"), "]]}")
	if !strings.Contains(conn, `{"Ref":"WsApi`) || !strings.HasPrefix(ws, conn+`,"/`) {
		t.Errorf("@connections: checks %s, functions post to %s", url("WebSocket"), ws)
	}

	// The same list as an output, for `go run ./localdev/egresscheck`.
	out := js((*s.tpl.ToJSON())["Outputs"].(map[string]any)[EgressEndpointsOutput])
	for _, want := range []string{`\"Name\":\"KMS (the relay key)\"`, `{"Ref":"WsApi`, `\"Network\":\"tcp6\"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output %s lacks %s", out, want)
		}
	}
	// Through a NAT: the SDK's default names over IPv4; a KMS interface
	// endpoint is reached in the VPC over IPv4 whatever the egress.
	m := managedStack(t).endpointsOf(t)
	for name, ep := range m {
		if ep["Network"] != "tcp4" || strings.Contains(js(ep["Url"]), "api.aws") || strings.Contains(js(ep["Url"]), "dualstack") {
			t.Errorf("managed %s: %s", name, js(ep))
		}
	}
	v := synth(t, map[string]any{"kmsEndpoint": true, "media": false})
	ve := v.endpointsOf(t)
	if ve["KMS"]["Network"] != "tcp4" || js(ve["KMS"]["Url"]) != `{"Fn::Join":["",["https://kms.",{"Ref":"AWS::Region"},".amazonaws.com"]]}` {
		t.Errorf("kmsEndpoint: KMS %s", js(ve["KMS"]))
	}
	if ve["Lambda"]["Network"] != "tcp6" || ve["S3"] != nil || len(ve) != 5 { // with DynamoDB
		t.Errorf("kmsEndpoint, no media: %s", js(ve))
	}
	if env := v.env(t, "query"); env["AWS_ENDPOINT_URL_KMS"] != nil {
		t.Errorf("kmsEndpoint: query still names KMS's public endpoint %v", env["AWS_ENDPOINT_URL_KMS"])
	}
}

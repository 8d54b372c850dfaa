package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// runNode runs script with node (args after it) and decodes its JSON
// output into out. Without node the test is skipped, unless
// BUZZ_REQUIRE_CDK=1 (make test-infra) makes that a failure.
func runNode(t *testing.T, script string, out any, args ...string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("BUZZ_REQUIRE_CDK") == "1" {
			t.Fatal("node is needed to run the distribution's functions")
		}
		t.Skip("node is not on PATH: the CloudFront function and the edge upload function were not run (make test-infra sets BUZZ_REQUIRE_CDK=1, which makes this a failure)")
	}
	p := filepath.Join(t.TempDir(), "run.js")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(node, append([]string{p}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node output %s: %v", b, err)
	}
}

// routerHarness runs a CloudFront Function's code (argv[2]) on each
// viewer-request event of argv[3], with the cloudfront module's
// selectRequestOriginById recorded, and prints what each request became.
const routerHarness = `const fs = require('fs');
let selected = null;
const cf = { selectRequestOriginById(id) { selected = id; } };
const code = fs.readFileSync(process.argv[2], 'utf8').replace("import cf from 'cloudfront';", '');
const handler = new Function('cf', code + '\nreturn handler;')(cf);
const out = JSON.parse(fs.readFileSync(process.argv[3], 'utf8')).map((ev) => {
  selected = null;
  const r = handler(ev);
  const hh = r.headers['` + HostHeader + `'];
  return { selected, uri: r.uri, forwardedHost: hh ? hh.value : '' };
});
console.log(JSON.stringify(out));
`

// behaviorFor is the cache behaviour CloudFront applies to path: the
// first path pattern that matches (the patterns here are exact paths),
// else the default; its origin and viewer-request function.
func behaviorFor(dist map[string]any, path string) (origin string, fn string, edge []string) {
	pick := dist["DefaultCacheBehavior"].(map[string]any)
	for _, b := range dist["CacheBehaviors"].([]any) {
		if b := b.(map[string]any); b["PathPattern"] == path {
			pick = b
			break
		}
	}
	for _, a := range asAny(pick["FunctionAssociations"]) {
		if a := a.(map[string]any); a["EventType"] == "viewer-request" {
			fn = js(a["FunctionARN"])
		}
	}
	for _, a := range asAny(pick["LambdaFunctionAssociations"]) {
		edge = append(edge, a.(map[string]any)["EventType"].(string))
	}
	return pick["TargetOriginId"].(string), fn, edge
}

func asAny(v any) []any {
	l, _ := v.([]any)
	return l
}

// Must show (issue 55): one hostname serves NIP-11, POST /query and the
// WebSocket upgrade by default, without -c domain. The default template
// has one distribution on its own name (no alias, no certificate of ours),
// every function's BUZZ_PUBLIC_URL and the PublicUrl output are
// https://<that name>, and CloudFront's routing, read from the template
// (behaviours, origins) with the viewer-request function's own code run
// on sample requests, sends NIP-11 and /query to the HTTP API and the
// upgrade to the WebSocket API's stage; Buzz desktop's PUT /media/upload
// gets the edge upload function.
func TestOneHostnameByDefault(t *testing.T) {
	s := defaultStack(t)
	dists := s.ofType("AWS::CloudFront::Distribution")
	if len(dists) != 1 {
		t.Fatalf("%d distributions, want 1", len(dists))
	}
	var distID string
	var dist map[string]any
	for id, r := range dists {
		distID, dist = id, r.Properties["DistributionConfig"].(map[string]any)
	}
	if dist["Aliases"] != nil || strings.Contains(js(dist["ViewerCertificate"]), "AcmCertificateArn") {
		t.Errorf("a default deploy has no domain: aliases %v, certificate %s", dist["Aliases"], js(dist["ViewerCertificate"]))
	}
	origins := map[string]string{}
	for _, o := range dist["Origins"].([]any) {
		o := o.(map[string]any)
		origins[o["Id"].(string)] = js(o["DomainName"])
	}
	if !strings.Contains(origins[httpOriginID], `{"Ref":"HttpApi`) || !strings.Contains(origins[wsOriginID], `{"Ref":"WsApi`) || len(origins) != 2 {
		t.Fatalf("origins %v", origins)
	}
	public := `{"Fn::Join":["",["https://",{"Fn::GetAtt":["` + distID + `","DomainName"]}]]}`
	for name := range s.ourFunctions(t) {
		if f := fnByName(name); !f.Migrate && js(s.env(t, name)["BUZZ_PUBLIC_URL"]) != public {
			t.Errorf("%s: BUZZ_PUBLIC_URL %s, want %s", name, js(s.env(t, name)["BUZZ_PUBLIC_URL"]), public)
		}
	}
	outs := s.tpl.ToJSON()
	if got := js((*outs)["Outputs"].(map[string]any)["PublicUrl"].(map[string]any)["Value"]); got != public {
		t.Errorf("PublicUrl %s, want %s", got, public)
	}

	// The viewer-request function's code, run on what the app sends.
	funcs := s.ofType("AWS::CloudFront::Function")
	if len(funcs) != 1 {
		t.Fatalf("%d CloudFront functions", len(funcs))
	}
	var fnID, code string
	for id, r := range funcs {
		fnID, code = id, r.Properties["FunctionCode"].(string)
	}
	host := map[string]any{"value": "d111111abcdef8.cloudfront.net"}
	samples := []struct {
		name, method, path string
		headers            map[string]any
		origin, uri        string
		edge               []string
	}{
		{"NIP-11", "GET", "/", map[string]any{"host": host, "accept": map[string]any{"value": "application/nostr+json"}}, httpOriginID, "/", nil},
		{"POST /query", "POST", "/query", map[string]any{"host": host, "content-type": map[string]any{"value": "application/json"}}, httpOriginID, "/query", nil},
		{"WebSocket upgrade", "GET", "/", map[string]any{"host": host, "upgrade": map[string]any{"value": "websocket"}, "connection": map[string]any{"value": "Upgrade"},
			"sec-websocket-key": map[string]any{"value": "dGhlIHNhbXBsZSBub25jZQ=="}, "sec-websocket-version": map[string]any{"value": "13"}}, wsOriginID, "/" + WebSocketStageName, nil},
		{"Buzz desktop's upload", "PUT", "/media/upload", map[string]any{"host": host, "content-length": map[string]any{"value": "52428800"}}, httpOriginID, "/media/upload", []string{"origin-request", "origin-response"}},
	}
	var events []any
	for _, c := range samples {
		events = append(events, map[string]any{"version": "1.0", "context": map[string]any{"eventType": "viewer-request"},
			"viewer": map[string]any{"ip": "192.0.2.1"}, "request": map[string]any{"method": c.method, "uri": c.path, "querystring": map[string]any{}, "headers": c.headers, "cookies": map[string]any{}}})
	}
	dir := t.TempDir()
	codePath, evPath := filepath.Join(dir, "router.js"), filepath.Join(dir, "events.json")
	raw, _ := json.Marshal(events)
	if err := os.WriteFile(codePath, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(evPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Selected      *string
		URI           string
		ForwardedHost string
	}
	runNode(t, routerHarness, &got, codePath, evPath)
	for i, c := range samples {
		origin, fn, edge := behaviorFor(dist, c.path)
		if !strings.Contains(fn, fnID) {
			t.Errorf("%s: behaviour runs function %s, want %s", c.name, fn, fnID)
		}
		if got[i].Selected != nil {
			origin = *got[i].Selected
		}
		if origin != c.origin || got[i].URI != c.uri || got[i].ForwardedHost != "d111111abcdef8.cloudfront.net" {
			t.Errorf("%s: origin %s uri %s host %q; want %s %s", c.name, origin, got[i].URI, got[i].ForwardedHost, c.origin, c.uri)
		}
		if strings.Join(edge, ",") != strings.Join(c.edge, ",") {
			t.Errorf("%s: edge functions %v, want %v", c.name, edge, c.edge)
		}
	}
	// wss://<host>/live reaches the stage without the router too.
	if o, _, _ := behaviorFor(dist, "/"+WebSocketStageName); o != wsOriginID {
		t.Errorf("/%s goes to %s", WebSocketStageName, o)
	}
	// Without media there is no upload behaviour and no edge stack.
	noMedia := synth(t, map[string]any{"media": false})
	for _, r := range noMedia.ofType("AWS::CloudFront::Distribution") {
		if d := js(r.Properties); strings.Contains(d, UploadBehaviorPath) || strings.Contains(d, "LambdaFunctionAssociations") {
			t.Errorf("media off: %s", d)
		}
	}
}

// edgeHarness loads the edge upload function's code (argv[2]) as Lambda
// runs it, with fetch answering from a script of relay answers, and runs
// each case of argv[3]; it prints what the function returned and the
// relay calls it made.
const edgeHarness = `const fs = require('fs');
const mod = { exports: {} };
new Function('exports', 'module', 'require', fs.readFileSync(process.argv[2], 'utf8'))(mod.exports, mod, require);
(async () => {
  const out = [];
  for (const c of JSON.parse(fs.readFileSync(process.argv[3], 'utf8'))) {
    const calls = [];
    global.fetch = async (url, init) => {
      calls.push({ url, method: init.method, headers: init.headers });
      const a = c.relay.shift();
      return { status: a.status, headers: new Map(Object.entries(a.headers || {})), text: async () => a.body };
    };
    const ev = { Records: [{ cf: { config: { eventType: c.eventType }, request: c.request, response: c.response } }] };
    out.push({ result: await mod.exports.handler(ev), calls });
  }
  console.log(JSON.stringify(out));
})();
`

// TestEdgeUploadFunction: the edge upload function, from the companion
// stack's template (Node.js in us-east-1, a role Lambda@Edge can assume,
// the alias the main stack reads with lambda:GetAlias there), run with
// node on the events CloudFront gives it: a large PUT is staged by the
// relay and sent to the presigned S3 URL with its signed headers and
// without the caller's Authorization; a small one, a POST and the
// relay's refusals pass or come back as the relay gave them; a PUT
// without a length is answered 411; S3's success is completed by the
// relay, whose descriptor replaces S3's answer; S3's refusal is a 409.
func TestEdgeUploadFunction(t *testing.T) {
	ctx := cdkContext(t, nil)
	ctx["assetDir"] = assetDir(t)
	app, stack, s := newStack(t, ctx, "")
	edge, ok := app.Node().TryFindChild(jsii.String(s.EdgeStackName())).(awscdk.Stack)
	if !ok {
		t.Fatalf("no stack %s", s.EdgeStackName())
	}
	if *edge.Region() != EdgeRegion {
		t.Errorf("edge stack in %s", *edge.Region())
	}
	et := assertions.Template_FromStack(edge, nil)
	found := et.FindResources(jsii.String("AWS::Lambda::Function"), nil)
	fns := map[string]any{}
	raw0, _ := json.Marshal(found)
	_ = json.Unmarshal(raw0, &fns)
	if len(fns) != 1 {
		t.Fatalf("%d functions in the edge stack", len(fns))
	}
	var code string
	for _, r := range fns {
		p := r.(map[string]any)["Properties"].(map[string]any)
		code = p["Code"].(map[string]any)["ZipFile"].(string)
		if p["Runtime"] != "nodejs22.x" || p["FunctionName"] != s.EdgeUploadFunctionName() || p["Environment"] != nil {
			t.Errorf("edge function %s", js(p))
		}
	}
	if code != EdgeUploadCode(s) || !strings.Contains(code, "const DIRECT_MAX = 4194304;") {
		t.Errorf("edge code is not edgeupload.js with this stack's constants")
	}
	et.HasResourceProperties(jsii.String("AWS::IAM::Role"), map[string]any{"AssumeRolePolicyDocument": assertions.Match_ObjectLike(&map[string]any{
		"Statement": []any{map[string]any{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": map[string]any{"Service": []any{"edgelambda.amazonaws.com", "lambda.amazonaws.com"}}}}})})
	et.HasResourceProperties(jsii.String("AWS::Lambda::Alias"), map[string]any{"Name": EdgeUploadAlias})
	main := js(assertions.Template_FromStack(stack, nil).ToJSON())
	for _, want := range []string{`\"action\":\"GetAlias\"`, `\"region\":\"us-east-1\"`, `"lambda:GetAlias"`, s.EdgeUploadFunctionName()} {
		if !strings.Contains(main, want) {
			t.Errorf("the main stack does not read the version (%s)", want)
		}
	}

	h := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[strings.ToLower(kv[i])] = []any{map[string]any{"key": kv[i], "value": kv[i+1]}}
		}
		return m
	}
	auth := "Nostr eyJraW5kIjoyNDI0Mn0"
	presign := `{"url":"https://media-bucket.s3.us-east-2.amazonaws.com/uploads/default/u1?X-Amz-Signature=abc&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost%3Bx-amz-checksum-sha256","method":"PUT",` +
		`"headers":{"Content-Length":"5242880","Content-Type":"video/mp4","X-Amz-Checksum-Sha256":"q1w2e3=="},"upload_id":"u1","sha256":"ab","size":5242880}`
	descriptor := `{"url":"https://d1.cloudfront.net/media/ab","sha256":"ab","size":5242880,"type":"video/mp4","uploaded":1}`
	put := func(length string) map[string]any {
		kv := []string{"Host", "media-origin.example", HostHeader, "d1.cloudfront.net", "Authorization", auth, "X-SHA-256", "ab", "Content-Type", "video/mp4"}
		if length != "" {
			kv = append(kv, "Content-Length", length)
		}
		return map[string]any{"method": "PUT", "uri": "/media/upload", "querystring": "", "headers": h(kv...),
			"origin": map[string]any{"custom": map[string]any{"domainName": "abc123.execute-api.us-east-2.amazonaws.com", "port": 443, "protocol": "https", "path": ""}}}
	}
	staged := map[string]any{"method": "PUT", "uri": "/uploads/default/u1", "querystring": "X-Amz-Signature=abc",
		"headers": h("X-Buzz-Upload-Auth", auth, "X-Buzz-Upload-Api", "abc123.execute-api.us-east-2.amazonaws.com", HostHeader, "d1.cloudfront.net", "X-SHA-256", "ab")}
	type relayAnswer struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers,omitempty"`
		Body    string            `json:"body"`
	}
	cases := []map[string]any{
		{"eventType": "origin-request", "request": put("5242880"), "relay": []relayAnswer{{200, nil, presign}}},
		{"eventType": "origin-request", "request": put("1000"), "relay": []relayAnswer{}},
		{"eventType": "origin-request", "request": put(""), "relay": []relayAnswer{}},
		{"eventType": "origin-request", "request": put("5242880"), "relay": []relayAnswer{{403, map[string]string{"x-reason": "restricted: not a member"}, `{"message":"restricted: not a member"}`}}},
		{"eventType": "origin-request", "request": map[string]any{"method": "POST", "uri": "/media/upload", "headers": h("Content-Length", "0")}, "relay": []relayAnswer{}},
		{"eventType": "origin-response", "request": staged, "response": map[string]any{"status": "200", "headers": map[string]any{}}, "relay": []relayAnswer{{200, nil, descriptor}}},
		{"eventType": "origin-response", "request": staged, "response": map[string]any{"status": "400", "headers": map[string]any{}}, "relay": []relayAnswer{}},
		{"eventType": "origin-response", "request": put("1000"), "response": map[string]any{"status": "201", "headers": map[string]any{}}, "relay": []relayAnswer{}},
	}
	dir := t.TempDir()
	codePath, casePath := filepath.Join(dir, "index.js"), filepath.Join(dir, "cases.json")
	raw, _ := json.Marshal(cases)
	_ = os.WriteFile(codePath, []byte(code), 0o644)
	_ = os.WriteFile(casePath, raw, 0o644)
	var got []struct {
		Result map[string]any
		Calls  []struct {
			URL, Method string
			Headers     map[string]string
		}
	}
	runNode(t, edgeHarness, &got, codePath, casePath)
	if len(got) != len(cases) {
		t.Fatalf("%d results", len(got))
	}
	hv := func(r map[string]any, name string) string {
		l, _ := r["headers"].(map[string]any)[name].([]any)
		if len(l) == 0 {
			return ""
		}
		return l[0].(map[string]any)["value"].(string)
	}
	// 0: staged, then sent to S3.
	r, c := got[0].Result, got[0].Calls
	if len(c) != 1 || c[0].Method != "POST" || c[0].URL != "https://abc123.execute-api.us-east-2.amazonaws.com/media/upload" || c[0].Headers[HostHeader] != "d1.cloudfront.net" || c[0].Headers["authorization"] != auth ||
		c[0].Headers["x-content-length"] != "5242880" || c[0].Headers["x-sha-256"] != "ab" || c[0].Headers["x-content-type"] != "video/mp4" {
		t.Errorf("stage call %+v", c)
	}
	if js(r["origin"]) == "null" || !strings.Contains(js(r["origin"]), `"domainName":"media-bucket.s3.us-east-2.amazonaws.com"`) || r["uri"] != "/uploads/default/u1" ||
		!strings.HasPrefix(r["querystring"].(string), "X-Amz-Signature=abc") || hv(r, "authorization") != "" || hv(r, "host") != "media-bucket.s3.us-east-2.amazonaws.com" ||
		hv(r, "x-amz-checksum-sha256") != "q1w2e3==" || hv(r, "content-length") != "5242880" || hv(r, "x-buzz-upload-auth") != auth ||
		hv(r, "x-buzz-upload-api") != "abc123.execute-api.us-east-2.amazonaws.com" {
		t.Errorf("staged request %s", js(r))
	}
	// 1: small, 4: POST: untouched, no relay call.
	for _, i := range []int{1, 4} {
		if len(got[i].Calls) != 0 || got[i].Result["status"] != nil || got[i].Result["uri"] != "/media/upload" {
			t.Errorf("case %d: %s %+v", i, js(got[i].Result), got[i].Calls)
		}
	}
	// 2: no length.
	if got[2].Result["status"] != "411" || !strings.HasPrefix(hv(got[2].Result, "x-reason"), "invalid:") {
		t.Errorf("no length: %s", js(got[2].Result))
	}
	// 3: the relay's refusal, as it gave it.
	if r := got[3].Result; r["status"] != "403" || r["body"] != `{"message":"restricted: not a member"}` || hv(r, "x-reason") != "restricted: not a member" {
		t.Errorf("refusal: %s", js(r))
	}
	// 5: completed: the descriptor replaces S3's answer.
	if r, c := got[5].Result, got[5].Calls; r["status"] != "200" || r["body"] != descriptor || len(c) != 1 || c[0].Method != "PUT" ||
		c[0].Headers["authorization"] != auth || c[0].Headers["x-sha-256"] != "ab" || c[0].URL != "https://abc123.execute-api.us-east-2.amazonaws.com/media/upload" || c[0].Headers[HostHeader] != "d1.cloudfront.net" {
		t.Errorf("completion: %s %+v", js(r), c)
	}
	// 6: S3 refused the bytes.
	if r := got[6].Result; r["status"] != "409" || len(got[6].Calls) != 0 {
		t.Errorf("S3 refusal: %s", js(r))
	}
	// 7: a small upload's answer passes.
	if r := got[7].Result; r["status"] != "201" || len(got[7].Calls) != 0 {
		t.Errorf("small upload's answer: %s", js(r))
	}
}

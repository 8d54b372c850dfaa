package main

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// mediaBucket is the logical id of the one media bucket of s.
func (s synthesized) mediaBucket(t *testing.T) string {
	t.Helper()
	buckets := s.ofType("AWS::S3::Bucket")
	if len(buckets) != 1 {
		t.Fatalf("%d buckets, want the one media bucket", len(buckets))
	}
	for id := range buckets {
		return id
	}
	return ""
}

var (
	noMediaOnce sync.Once
	noMedia     synthesized
)

// noMediaStack is -c media=false, synthesized once.
func noMediaStack(t *testing.T) synthesized {
	noMediaOnce.Do(func() { noMedia = synth(t, map[string]any{"media": false}) })
	if noMedia.res == nil {
		t.Fatal("media=false synth failed")
	}
	return noMedia
}

// Must show: the bucket is private (every public access blocked, ACLs
// off, TLS only), encrypted, and its lifecycle expires staged uploads and
// trash and aborts incomplete multipart uploads, and never expires blobs
// (the sessions keep nothing in it: they live in DynamoDB, sessions.go).
func TestMediaBucketPrivateEncryptedLifecycle(t *testing.T) {
	s := defaultStack(t)
	id := s.mediaBucket(t)
	s.tpl.HasResource(jsii.String("AWS::S3::Bucket"), map[string]any{
		"DeletionPolicy":      "RetainExceptOnCreate",
		"UpdateReplacePolicy": "Retain",
	})
	p := s.res[id].Properties
	if got := js(p["PublicAccessBlockConfiguration"]); got != `{"BlockPublicAcls":true,"BlockPublicPolicy":true,"IgnorePublicAcls":true,"RestrictPublicBuckets":true}` {
		t.Errorf("public access block %s", got)
	}
	if got := js(p["OwnershipControls"]); got != `{"Rules":[{"ObjectOwnership":"BucketOwnerEnforced"}]}` {
		t.Errorf("ownership controls %s (ACLs must be off)", got)
	}
	if got := js(p["BucketEncryption"]); got != `{"ServerSideEncryptionConfiguration":[{"ServerSideEncryptionByDefault":{"SSEAlgorithm":"AES256"}}]}` {
		t.Errorf("encryption %s, want SSE-S3 (AES256)", got)
	}
	if v := js(p["VersioningConfiguration"]); v != "null" && !strings.Contains(v, "Suspended") {
		t.Errorf("versioning %s: the bucket is unversioned (docs/deploy.md)", v)
	}
	if p["AccessControl"] != nil || p["WebsiteConfiguration"] != nil {
		t.Errorf("bucket ACL or website: %s", js(p))
	}

	rules := map[string]map[string]any{}
	for _, r := range p["LifecycleConfiguration"].(map[string]any)["Rules"].([]any) {
		rule := r.(map[string]any)
		if rule["Status"] != "Enabled" {
			t.Errorf("lifecycle rule not enabled: %s", js(rule))
		}
		rules[rule["Id"].(string)] = rule
	}
	for name, want := range map[string]string{
		"expire-staged-uploads":      `{"ExpirationInDays":1,"Id":"expire-staged-uploads","Prefix":"uploads/","Status":"Enabled"}`,
		"expire-trash":               `{"ExpirationInDays":7,"Id":"expire-trash","Prefix":"trash/","Status":"Enabled"}`,
		"abort-incomplete-multipart": `{"AbortIncompleteMultipartUpload":{"DaysAfterInitiation":1},"Id":"abort-incomplete-multipart","Status":"Enabled"}`,
	} {
		if got := js(rules[name]); got != want {
			t.Errorf("lifecycle %s: %s\nwant %s", name, got, want)
		}
	}
	if len(rules) != 3 {
		t.Errorf("lifecycle rules %s", js(rules))
	}
	for _, r := range rules {
		if strings.Contains(js(r), MediaBlobsPrefix) || (r["Prefix"] == nil && r["ExpirationInDays"] != nil) {
			t.Errorf("a lifecycle rule expires stored blobs: %s", js(r))
		}
	}

	// Browsers PUT to and GET (with Range) from presigned URLs.
	cors := p["CorsConfiguration"].(map[string]any)["CorsRules"].([]any)
	if len(cors) != 1 {
		t.Fatalf("CORS rules %s", js(cors))
	}
	c := cors[0].(map[string]any)
	if js(c["AllowedMethods"]) != `["GET","HEAD","PUT"]` || js(c["AllowedOrigins"]) != `["*"]` || js(c["AllowedHeaders"]) != `["*"]` ||
		!strings.Contains(js(c["ExposedHeaders"]), `"ETag"`) || !strings.Contains(js(c["ExposedHeaders"]), `"Content-Range"`) {
		t.Errorf("CORS %s", js(c))
	}

	// TLS only (1.2 and later), for every principal.
	policies := s.ofType("AWS::S3::BucketPolicy")
	if len(policies) != 1 {
		t.Fatalf("%d bucket policies", len(policies))
	}
	for _, bp := range policies {
		if js(bp.Properties["Bucket"]) != `{"Ref":"`+id+`"}` {
			t.Errorf("bucket policy on %s", js(bp.Properties["Bucket"]))
		}
		doc := js(bp.Properties["PolicyDocument"])
		for _, want := range []string{`"Bool":{"aws:SecureTransport":"false"}`, `"NumericLessThan":{"s3:TlsVersion":1.2}`} {
			if !strings.Contains(doc, want) {
				t.Errorf("bucket policy lacks %s: %s", want, doc)
			}
		}
		for _, st := range bp.Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			if st.(map[string]any)["Effect"] != "Deny" {
				t.Errorf("bucket policy allows something: %s", js(st))
			}
		}
	}
	if !strings.Contains(js(s.tpl.ToJSON()), `"MediaBucketName":{"Description"`) {
		t.Error("no MediaBucketName output")
	}
}

// Must show: least privilege. Each function's S3 statements are exactly
// its rows of MediaGrants on this bucket's prefixes; no other function
// (nor any other role) may touch the bucket; query writes only what
// completing a staged upload needs (put into blobs/, delete from uploads/).
func TestMediaGrantsLeastPrivilege(t *testing.T) {
	s := defaultStack(t)
	id := s.mediaBucket(t)
	fns := s.ourFunctions(t)
	objects := func(prefix string) string {
		return js(map[string]any{"Fn::Join": []any{"", []any{map[string]any{"Fn::GetAtt": []any{id, "Arn"}}, "/" + prefix + "*"}}})
	}
	for name, fid := range fns {
		want := map[string]string{}
		for _, g := range MediaGrants[name] {
			acts := append([]string(nil), g.Actions...)
			sort.Strings(acts)
			a := js(acts)
			if len(acts) == 1 {
				a = js(acts[0])
			}
			want[g.Sid] = a + " on " + objects(g.Prefix)
		}
		if MediaListers[name] {
			want["MediaList"] = `"s3:ListBucket" on ` + js(map[string]any{"Fn::GetAtt": []any{id, "Arn"}})
		}
		got := map[string]string{}
		for _, st := range s.grantsOf(fid) {
			a := js(st["Action"])
			if !strings.Contains(a, "s3:") {
				continue
			}
			sid, _ := st["Sid"].(string)
			if strings.HasPrefix(sid, "Session") || strings.HasPrefix(sid, "Directory") {
				continue // the sessions' state (TestSessionGrants), the directory (TestDirectoryGrants)
			}
			if st["Effect"] != "Allow" || st["Condition"] != nil {
				t.Errorf("%s: S3 statement %s", name, js(st))
			}
			got[sid] = a + " on " + js(st["Resource"])
		}
		if js(got) != js(want) {
			t.Errorf("%s S3 grants:\n got %s\nwant %s", name, js(got), js(want))
		}
		if f := fnByName(name); f.HoldsMedia() != (len(got) > 0) {
			t.Errorf("%s: holds media %v, has S3 grants %v", name, f.HoldsMedia(), got)
		}
	}
	// The table itself: ingest writes, query reads and completes staged
	// uploads only, and the prefixes are the three of the contract.
	queryMay := map[string]bool{
		MediaBlobsPrefix + "s3:GetObject": true, MediaBlobsPrefix + "s3:PutObject": true,
		MediaUploadsPrefix + "s3:GetObject": true, MediaUploadsPrefix + "s3:DeleteObject": true,
	}
	for name, gs := range MediaGrants {
		for _, g := range gs {
			if g.Prefix != MediaBlobsPrefix && g.Prefix != MediaUploadsPrefix && g.Prefix != MediaTrashPrefix {
				t.Errorf("%s: grant on %q", name, g.Prefix)
			}
			for _, a := range g.Actions {
				if strings.Contains(a, "*") || (name == "query" && !queryMay[g.Prefix+a]) {
					t.Errorf("%s: %s on %s", name, a, g.Prefix)
				}
			}
		}
	}
	// Pinned: widening a grant is a reviewed change of this test too.
	pinned := map[string]string{
		"ingest/blobs/":   "s3:DeleteObject s3:GetObject s3:PutObject",
		"ingest/uploads/": "s3:AbortMultipartUpload s3:DeleteObject s3:GetObject s3:PutObject",
		"ingest/trash/":   "s3:DeleteObject s3:GetObject s3:PutObject",
		"query/blobs/":    "s3:GetObject s3:PutObject",
		"query/uploads/":  "s3:DeleteObject s3:GetObject",
		// NIP-62: a request to vanish over WebSocket deletes its objects.
		"ws-message/blobs/":   "s3:DeleteObject",
		"ws-message/uploads/": "s3:DeleteObject",
	}
	table := map[string]string{}
	for name, gs := range MediaGrants {
		for _, g := range gs {
			acts := append([]string(nil), g.Actions...)
			sort.Strings(acts)
			table[name+"/"+g.Prefix] = strings.Join(acts, " ")
		}
	}
	if js(table) != js(pinned) || js(MediaListers) != `{"ingest":true,"query":true}` {
		t.Errorf("media grants %s, listers %s\nwant %s", js(table), js(MediaListers), js(pinned))
	}
	// No other role names the bucket.
	sts, roles := s.statements()
	for i, st := range sts {
		if !strings.Contains(js(st["Resource"]), `"`+id+`"`) {
			continue
		}
		if sid, _ := st["Sid"].(string); strings.HasPrefix(sid, "Session") || strings.HasPrefix(sid, "Directory") {
			continue // the sessions' state (TestSessionGrants), the directory (TestDirectoryGrants)
		}
		ok := false
		for _, r := range roles[i] {
			for name := range MediaGrants {
				ok = ok || strings.Contains(r, `"`+roleOf(fns[name]))
			}
		}
		if !ok {
			t.Errorf("statement on the media bucket for roles %v: %s", roles[i], js(st))
		}
	}
}

// The contract's environment on the media functions (and ws-message, for
// NIP-62), nothing of it on the others; S3 on its dual-stack name under egress=ipv6 only.
func TestMediaEnvironment(t *testing.T) {
	s := defaultStack(t)
	id := s.mediaBucket(t)
	want := map[string]any{
		"MEDIA_BUCKET":                 map[string]any{"Ref": id},
		"MEDIA_MAX_BYTES":              "104857600",
		"MEDIA_DIRECT_MAX_BYTES":       "4194304",
		"MEDIA_KEY_BYTES_PER_DAY":      "1073741824",
		"MEDIA_COMMUNITY_BYTES_STORED": "10737418240",
		"MEDIA_PRESIGN_TTL":            "15m",
		"AWS_ENDPOINT_URL_S3":          map[string]any{"Fn::Join": []any{"", []any{"https://s3.dualstack.", map[string]any{"Ref": "AWS::Region"}, ".amazonaws.com"}}},
	}
	served := 0
	for name := range s.ourFunctions(t) {
		env := s.env(t, name)
		got := map[string]any{}
		for k, v := range env {
			if strings.HasPrefix(k, "MEDIA_") || k == "AWS_ENDPOINT_URL_S3" {
				got[k] = v
			}
		}
		if fnByName(name).HoldsMedia() {
			served++
			if js(got) != js(want) {
				t.Errorf("%s media env:\n got %s\nwant %s", name, js(got), js(want))
			}
		} else if len(got) > 0 {
			t.Errorf("%s does not hold media but has %s", name, js(got))
		}
	}
	if served != 3 {
		t.Errorf("%d functions hold media, want ingest, query and ws-message (NIP-62)", served)
	}
	// Limits from context; NAT egress keeps the SDK's default S3 endpoint.
	o := synth(t, map[string]any{
		"egress": "nat-gateway", "mediaMaxBytes": 52428800, "mediaDirectMaxBytes": 1048576,
		"mediaKeyBytesPerDay": 5e8, "mediaCommunityBytesStored": 2e10, "mediaPresignTTL": "30m",
	})
	for _, name := range []string{"ingest", "query"} {
		env := o.env(t, name)
		for k, v := range map[string]string{
			"MEDIA_MAX_BYTES": "52428800", "MEDIA_DIRECT_MAX_BYTES": "1048576", "MEDIA_KEY_BYTES_PER_DAY": "500000000",
			"MEDIA_COMMUNITY_BYTES_STORED": "20000000000", "MEDIA_PRESIGN_TTL": "30m",
		} {
			if env[k] != v {
				t.Errorf("%s: %s=%v, want %s", name, k, env[k], v)
			}
		}
		if env["AWS_ENDPOINT_URL_S3"] != nil {
			t.Errorf("%s: AWS_ENDPOINT_URL_S3 %v behind a NAT", name, env["AWS_ENDPOINT_URL_S3"])
		}
	}
	// The direct limit stays under Lambda's 6 MB request payload once
	// base64-encoded, with 64 KB for the rest of the event.
	if b64 := (MediaDirectCeiling + 2) / 3 * 4; b64+64<<10 > 6291456 || DefaultMediaDirectMaxBytes > MediaDirectCeiling {
		t.Errorf("direct ceiling %d is %d bytes in base64", MediaDirectCeiling, b64)
	}
}

// Must show: the routes of the contract, writes to ingest and reads to
// query, and browsers allowed to use them.
func TestMediaRoutesAndCORS(t *testing.T) {
	s := defaultStack(t)
	fn := s.ourFunctions(t)
	integ := s.ofType("AWS::ApiGatewayV2::Integration")
	got := map[string]string{}
	for _, r := range s.ofType("AWS::ApiGatewayV2::Route") {
		target := js(r.Properties["Target"])
		for iid, ir := range integ {
			if strings.Contains(target, `"`+iid+`"`) {
				for name, fid := range fn {
					if strings.Contains(js(ir.Properties["IntegrationUri"]), `"`+fid+`"`) {
						got[r.Properties["RouteKey"].(string)] = name
					}
				}
			}
		}
	}
	want := map[string]string{
		"PUT /upload": "ingest", "HEAD /upload": "ingest", "DELETE /{blob}": "ingest",
		"PUT /media/upload": "ingest", "HEAD /media/upload": "ingest", "POST /media/upload": "ingest", "DELETE /media/{blob}": "ingest",
		"GET /{blob}": "query", "HEAD /{blob}": "query", "GET /list/{pubkey}": "query",
		"GET /media/{blob}": "query", "HEAD /media/{blob}": "query",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("route %s reaches %q, want %s", k, got[k], v)
		}
	}
	var api map[string]any
	for _, r := range s.ofType("AWS::ApiGatewayV2::Api") {
		if r.Properties["ProtocolType"] == "HTTP" {
			api = r.Properties
		}
	}
	c := js(api["CorsConfiguration"])
	for _, w := range []string{`"PUT"`, `"HEAD"`, `"DELETE"`, `"GET"`, `"POST"`, `"X-SHA-256"`, `"X-Content-Length"`, `"X-Content-Type"`, `"Authorization"`, `"ExposeHeaders":["X-Reason"`} {
		if !strings.Contains(c, w) {
			t.Errorf("HTTP API CORS lacks %s: %s", w, c)
		}
	}
}

// -c media=false: no bucket, no route, no grant, no MEDIA_* variable, so
// the media code is off; the routes are the bridge's alone.
func TestMediaOff(t *testing.T) {
	s := noMediaStack(t)
	s.tpl.ResourceCountIs(jsii.String("AWS::S3::Bucket"), jsii.Number(0))
	s.tpl.ResourceCountIs(jsii.String("AWS::S3::BucketPolicy"), jsii.Number(0))
	for name, id := range s.ourFunctions(t) {
		if env := js(s.env(t, name)); strings.Contains(env, "MEDIA_") || strings.Contains(env, "AWS_ENDPOINT_URL_S3") {
			t.Errorf("%s: %s", name, env)
		}
		if g := js(s.grantsOf(id)); strings.Contains(g, "s3:") {
			t.Errorf("%s: %s", name, g)
		}
	}
	var keys []string
	for _, r := range s.ofType("AWS::ApiGatewayV2::Route") {
		keys = append(keys, r.Properties["RouteKey"].(string))
	}
	sort.Strings(keys)
	if got := strings.Join(keys, ", "); got != "$connect, $default, $disconnect, DELETE /api/admin/v1/members/{pubkey}/ban, DELETE /api/admin/v1/members/{pubkey}/timeout, DELETE /api/admin/v1/operators/{pubkey}, GET /, GET /.well-known/nip29/livekit, GET /.well-known/nip29/livekit/{group}, GET /admin, GET /admin/{file}, GET /api/admin/v1/feedback, GET /api/admin/v1/feedback/{id}, GET /api/admin/v1/members/restrictions, GET /api/admin/v1/operators, GET /api/admin/v1/probe, GET /api/admin/v1/reports, GET /api/admin/v1/reports/{id}, GET /api/join-policy, GET /api/join-policy/privacy, GET /api/join-policy/terms, GET /buzz/v1/me/read-state, GET /buzz/v1/me/sidebar, GET /healthz, GET /info, GET /invite/{code}, GET /moderation/audit, GET /moderation/reports, GET /moderation/restricted, PATCH /api/admin/v1/feedback/{id}, POST /, POST /.well-known/nip29/livekit/{group}, POST /api/admin/v1/events/{id}/delete, POST /api/admin/v1/members/{pubkey}/ban, POST /api/admin/v1/members/{pubkey}/timeout, POST /api/admin/v1/reports/{id}/resolve, POST /api/invites, POST /api/invites/accept-policy, POST /api/invites/claim, POST /buzz/v1/me/read-state, POST /count, POST /events, POST /livekit/webhook, POST /query, PUT /api/admin/v1/operators/{pubkey}" { // issue 41: the console; issue 42: invites; issue 40: NIP-29 LiveKit; issue 52: the desktop's moderation and admin routes (the GIF proxy's only with -c gifs)
		t.Errorf("routes without media: %s", got)
	}
	if strings.Contains(js(s.tpl.ToJSON()), "MediaBucketName") {
		t.Error("MediaBucketName output without media")
	}
}

func TestMediaSettingsRejectMistakes(t *testing.T) {
	good := assetDir(t)
	for name, ctx := range map[string]map[string]any{
		"media flag":           {"media": "sometimes"},
		"direct over payload":  {"mediaDirectMaxBytes": 5e6},
		"direct over max":      {"mediaMaxBytes": 1e6, "mediaDirectMaxBytes": 2e6},
		"max over single PUT":  {"mediaMaxBytes": 6e9},
		"max fraction":         {"mediaMaxBytes": 1.5e6 + 0.5},
		"max zero":             {"mediaMaxBytes": 0},
		"key quota text":       {"mediaKeyBytesPerDay": "lots"},
		"community quota zero": {"mediaCommunityBytesStored": 0},
		"ttl long":             {"mediaPresignTTL": "2h"},
		"ttl short":            {"mediaPresignTTL": "10s"},
		"ttl unitless":         {"mediaPresignTTL": "900"},
	} {
		ctx["assetDir"] = good
		c := cdkContext(t, ctx)
		app := awscdk.NewApp(&awscdk.AppProps{Context: &c})
		if _, err := SettingsFrom(app.Node()); err == nil {
			t.Errorf("%s: accepted %v", name, ctx)
		}
	}
	c := cdkContext(t, map[string]any{"assetDir": good})
	st, err := SettingsFrom(awscdk.NewApp(&awscdk.AppProps{Context: &c}).Node())
	if err != nil {
		t.Fatal(err)
	}
	if !st.Media || strconv.FormatInt(st.MediaMaxBytes, 10) != "104857600" || st.MediaPresignTTL != DefaultMediaPresignTTL {
		t.Errorf("defaults %+v", st)
	}
}

package main

import (
	"strings"
	"testing"
)

// TestSessionGrants: the session functions, and they only, get
// SESSION_BUCKET (the media bucket) and S3 access to SessionPrefix alone:
// get, put and delete its objects, list under it.
func TestSessionGrants(t *testing.T) {
	s := defaultStack(t)
	id := s.mediaBucket(t)
	objects := js(map[string]any{"Fn::Join": []any{"", []any{map[string]any{"Fn::GetAtt": []any{id, "Arn"}}, "/" + SessionPrefix + "*"}}})
	bucket := js(map[string]any{"Fn::GetAtt": []any{id, "Arn"}})
	for name, fid := range s.ourFunctions(t) {
		got := map[string]string{}
		for _, st := range s.grantsOf(fid) {
			if sid, _ := st["Sid"].(string); strings.HasPrefix(sid, "Session") {
				got[sid] = js(st["Action"]) + " on " + js(st["Resource"]) + " if " + js(st["Condition"])
			}
		}
		want := map[string]string{}
		if SessionFunctions[name] {
			want["SessionState"] = `["s3:DeleteObject","s3:GetObject","s3:PutObject"] on ` + objects + " if null"
			want["SessionList"] = `"s3:ListBucket" on ` + bucket + ` if {"StringLike":{"s3:prefix":"` + SessionPrefix + `*"}}`
		}
		if js(got) != js(want) {
			t.Errorf("%s session grants:\n got %s\nwant %s", name, js(got), js(want))
		}
		env := s.env(t, name)
		if b, ok := env["SESSION_BUCKET"]; ok != SessionFunctions[name] || (ok && js(b) != `{"Ref":"`+id+`"}`) {
			t.Errorf("%s: SESSION_BUCKET %s", name, js(b))
		}
	}
	if len(SessionFunctions) != 5 { // ingest, query (NIP-86's disable forgets hosts), ws-message, ws-disconnect, ws-push
		t.Errorf("session functions %v", SessionFunctions)
	}
}

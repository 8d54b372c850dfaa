package main

import (
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// TestDirectoryGrants: query and ws-message, and they only, may get and
// put the directory's documents and list under DirectoryPrefix (so a
// missing document is a 404, not a 403), and have the bucket in their
// environment (DIRECTORY_BUCKET; lambdas.Function.Directory says which).
func TestDirectoryGrants(t *testing.T) {
	s := defaultStack(t)
	id := s.mediaBucket(t)
	objects := js(map[string]any{"Fn::Join": []any{"", []any{map[string]any{"Fn::GetAtt": []any{id, "Arn"}}, "/" + DirectoryPrefix + "*"}}})
	bucket := js(map[string]any{"Fn::GetAtt": []any{id, "Arn"}})
	directory := map[string]bool{}
	for _, f := range lambdas.Functions {
		directory[f.Name] = f.Directory
	}
	if !directory["query"] || !directory["ws-message"] {
		t.Fatal("query and ws-message must keep the directory (NIP-11, NIP-86, a new connection's host)")
	}
	for name, fid := range s.ourFunctions(t) {
		got := map[string]string{}
		for _, st := range s.grantsOf(fid) {
			if sid, _ := st["Sid"].(string); strings.HasPrefix(sid, "Directory") {
				got[sid] = js(st["Action"]) + " on " + js(st["Resource"]) + " if " + js(st["Condition"])
			}
		}
		want := map[string]string{}
		if directory[name] {
			want["Directory"] = `["s3:GetObject","s3:PutObject"] on ` + objects + " if null"
			want["DirectoryList"] = `"s3:ListBucket" on ` + bucket + ` if {"StringLike":{"s3:prefix":"` + DirectoryPrefix + `*"}}`
			if b, ok := s.env(t, name)["DIRECTORY_BUCKET"]; !ok || js(b) != `{"Ref":"`+id+`"}` {
				t.Errorf("%s: DIRECTORY_BUCKET %s, want the media bucket (the directory's)", name, js(b))
			}
		}
		if js(got) != js(want) {
			t.Errorf("%s directory grants:\n got %s\nwant %s", name, js(got), js(want))
		}
	}
}

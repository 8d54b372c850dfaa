package store_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocListsEveryFile: doc.go, the store's map, names each of its
// non-test Go files, so a newcomer finds every table's file from it.
func TestDocListsEveryFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for f := range sources(t) {
		if f == "doc.go" {
			continue
		}
		if !regexp.MustCompile(`(^|[^a-z_])` + regexp.QuoteMeta(f) + `([^a-z_]|$)`).Match(doc) {
			t.Errorf("doc.go does not name %s", f)
		}
	}
}

// sources are the store's non-test Go files by name.
func sources(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = src
	}
	if len(out) < 20 {
		t.Fatalf("%d store files: the test is not looking at the store", len(out))
	}
	return out
}

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
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f == "doc.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		if !regexp.MustCompile(`(^|[^a-z_])` + regexp.QuoteMeta(f) + `([^a-z_]|$)`).Match(doc) {
			t.Errorf("doc.go does not name %s", f)
		}
	}
}

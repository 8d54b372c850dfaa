package reject_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// TestNoPrefixedStringsOutsideReject: no non-test Go file of the module
// outside shared/domain/reject holds a string literal that starts with a
// NIP-01 prefix and ": " ("invalid: ...", "restricted: ..."). A refusal is
// built as a *reject.Error; its wire text is the transports' to write,
// each through its one error table.
func TestNoPrefixedStringsOutsideReject(t *testing.T) {
	root := moduleRoot(t)
	own := filepath.Join(root, "shared", "domain", "reject")
	fset := token.NewFileSet()
	scanned := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || path == own) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module (infra/, localdev/khatrupeer)
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if p, found := prefixed(s); found {
				rel, _ := filepath.Rel(root, fset.Position(lit.Pos()).Filename)
				t.Errorf("%s:%d: string %q is written with the %s: prefix; build a reject error instead",
					rel, fset.Position(lit.Pos()).Line, clip(s), p)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned %d files from %s; the walk missed the module", scanned, root)
	}
}

// TestPrefixScanCatches: the scan's predicate finds each prefix, and only
// at the start and with its ": ".
func TestPrefixScanCatches(t *testing.T) {
	for _, p := range reject.Prefixes {
		if _, found := prefixed(string(p) + ": x"); !found {
			t.Errorf("%s: not caught", p)
		}
	}
	for _, s := range []string{"invalid", "error:x", "an error: x", "Invalid: x", "restricted access"} {
		if p, found := prefixed(s); found {
			t.Errorf("%q caught as %s", s, p)
		}
	}
}

func prefixed(s string) (reject.Prefix, bool) {
	for _, p := range reject.Prefixes {
		if strings.HasPrefix(s, string(p)+": ") {
			return p, true
		}
	}
	return "", false
}

func clip(s string) string {
	if len(s) > 48 {
		return s[:48] + "…"
	}
	return s
}

// moduleRoot is the directory of the go.mod above this package.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

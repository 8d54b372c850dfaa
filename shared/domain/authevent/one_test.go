package authevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// verifiers are the packages that may check a signature: sigverify (the
// BIP-340 check itself), this one (every auth event) and eventcheck
// (every published event).
var verifiers = map[string]bool{
	"shared/domain/sigverify":  true,
	"shared/domain/authevent":  true,
	"shared/domain/eventcheck": true,
}

// TestOneAuthEventChecker fails on a second auth-event checker: a
// signature verified (sigverify's Event or Verify, go-nostr's
// CheckSignature, a schnorr Verify) outside the packages in verifiers, or
// a duration constant equal to MaxSkew outside this package, in the
// relay's code (shared/ and functions/, tests aside). It type-checks the
// sources against the export data `go list -export` builds.
func TestOneAuthEventChecker(t *testing.T) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export,Dir,GoFiles,Standard,Module", "./shared/...", "./functions/...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	type listed struct {
		ImportPath, Export, Dir string
		GoFiles                 []string
		Standard                bool
		Module                  *struct{ Path string }
	}
	const module = "github.com/buzzrelay/relay/"
	exports := map[string]string{}
	var own []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[l.ImportPath] = l.Export
		if strings.HasPrefix(l.ImportPath, module+"shared/") || strings.HasPrefix(l.ImportPath, module+"functions/") {
			own = append(own, l)
		}
	}
	if len(own) < 20 {
		t.Fatalf("go list found %d of the relay's packages; the scan would prove nothing", len(own))
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, errors.New("no export data for " + path)
		}
		return os.Open(exports[path])
	})
	var found []string
	for _, l := range own {
		rel := strings.TrimPrefix(l.ImportPath, module)
		var files []*ast.File
		for _, name := range l.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(l.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
		if _, err := (&types.Config{Importer: imp}).Check(l.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", rel, err)
		}
		for id, obj := range info.Uses {
			if fn, ok := obj.(*types.Func); ok && verifiesSignature(fn) && !verifiers[rel] {
				found = append(found, fset.Position(id.Pos()).String()+": "+fn.FullName()+" verifies a signature outside authevent; check the auth event with authevent.Checker")
			}
		}
		for id, obj := range info.Defs {
			c, ok := obj.(*types.Const)
			if !ok || rel == "shared/domain/authevent" || c.Type().String() != "time.Duration" {
				continue
			}
			if v, exact := constant.Int64Val(c.Val()); exact && v == int64(MaxSkew) {
				found = append(found, fset.Position(id.Pos()).String()+": "+c.Name()+" is a second auth skew; use authevent.MaxSkew")
			}
		}
	}
	for _, f := range found {
		t.Error(f)
	}
}

// verifiesSignature reports whether fn checks a signature.
func verifiesSignature(fn *types.Func) bool {
	if fn.Pkg() == nil {
		return false
	}
	path, name := fn.Pkg().Path(), fn.Name()
	switch {
	case strings.HasSuffix(path, "/shared/domain/sigverify"):
		return name == "Event" || name == "Verify"
	case path == "github.com/nbd-wtf/go-nostr":
		return name == "CheckSignature"
	case strings.HasSuffix(path, "/schnorr"):
		return name == "Verify"
	}
	return false
}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The walks of docs/architecture.md ("Paths, hop by hop", between the walk
// markers) name each hop in backticks as pkg.Name or pkg.Type.Method. The
// check holds every such name whose first part is the name of one of the
// module's packages to the code: pkg declares Name (a function, type,
// variable or constant) or a method Name, and Type.Method is a method of
// Type there. A hop renamed or moved fails the test until the walk follows.
const (
	walkBegin = "<!-- walk:begin (names checked by go test ./localdev/archmap) -->"
	walkEnd   = "<!-- walk:end -->"
)

var hopName = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Za-z_][A-Za-z0-9_]*)(?:\\.([A-Za-z_][A-Za-z0-9_]*))?(?:\\(\\))?`")

// decls is what one package declares: its top-level names and, per
// receiver type, its methods ("" collects every method name).
type decls struct {
	names   map[string]bool
	methods map[string]map[string]bool
}

// walkSection is the text between the walk markers.
func walkSection(doc string) (string, error) {
	i := strings.Index(doc, walkBegin)
	j := strings.Index(doc, walkEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %q … %q section", walkBegin, walkEnd)
	}
	return doc[i+len(walkBegin) : j], nil
}

// checkWalk returns the names of the walk that the code does not declare.
func checkWalk(root string, pkgs []pkg, doc string) ([]string, error) {
	walk, err := walkSection(doc)
	if err != nil {
		return nil, err
	}
	byName := map[string][]string{} // package name → its folders
	for _, p := range pkgs {
		byName[filepath.Base(p.rel)] = append(byName[filepath.Base(p.rel)], p.rel)
	}
	cache := map[string]decls{}
	var missing []string
	for _, m := range hopName.FindAllStringSubmatch(walk, -1) {
		dirs, ok := byName[m[1]]
		if !ok {
			continue // not one of the module's packages (a table, a Go type's field)
		}
		found := false
		for _, dir := range dirs {
			d, ok := cache[dir]
			if !ok {
				if d, err = declsOf(filepath.Join(root, dir)); err != nil {
					return nil, err
				}
				cache[dir] = d
			}
			if m[3] == "" {
				found = found || d.names[m[2]] || d.methods[""][m[2]]
			} else {
				found = found || d.methods[m[2]][m[3]]
			}
		}
		if !found && !slices.Contains(missing, strings.Trim(m[0], "`")) {
			missing = append(missing, strings.Trim(m[0], "`"))
		}
	}
	return missing, nil
}

// declsOf parses the non-test Go files of dir.
func declsOf(dir string) (decls, error) {
	d := decls{names: map[string]bool{}, methods: map[string]map[string]bool{"": {}}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return d, err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return d, err
		}
		for _, decl := range f.Decls {
			switch x := decl.(type) {
			case *ast.FuncDecl:
				if x.Recv == nil || len(x.Recv.List) == 0 {
					d.names[x.Name.Name] = true
					continue
				}
				t := x.Recv.List[0].Type
				for {
					switch y := t.(type) {
					case *ast.StarExpr:
						t = y.X
						continue
					case *ast.IndexExpr:
						t = y.X
						continue
					}
					break
				}
				if id, ok := t.(*ast.Ident); ok {
					if d.methods[id.Name] == nil {
						d.methods[id.Name] = map[string]bool{}
					}
					d.methods[id.Name][x.Name.Name] = true
				}
				d.methods[""][x.Name.Name] = true
			case *ast.GenDecl:
				for _, spec := range x.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						d.names[s.Name.Name] = true
						// an interface's methods are its type's methods
						if it, ok := s.Type.(*ast.InterfaceType); ok {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									if d.methods[s.Name.Name] == nil {
										d.methods[s.Name.Name] = map[string]bool{}
									}
									d.methods[s.Name.Name][n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							d.names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return d, nil
}

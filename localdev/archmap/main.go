// Command archmap keeps the package table of docs/architecture.md equal to
// the tree: one row per package of the module (`go list ./...`), its
// module-internal imports (non-test) and the outside modules it imports,
// computed by `go list -deps`, and a description written by hand.
//
//	go run ./localdev/archmap          # exit 1 and say what differs
//	go run ./localdev/archmap -write   # rewrite the table between the markers
//
// -write keeps every description already in the table, fills a new package's
// from its package doc comment when it has one, and names the packages that
// still need one. Both modes also hold every import to the layers (layers):
// an import of a higher layer is an error. The test in this folder fails
// while the table differs from the tree, a row has no description or an
// import runs up the layers.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

const (
	beginMarker = "<!-- archmap:begin (go run ./localdev/archmap -write) -->"
	endMarker   = "<!-- archmap:end -->"
	header      = "| package | provides | depends on (this module) | outside modules |\n| --- | --- | --- | --- |\n"
)

// groupOrder lists the folders in the order the table reads them: the
// entry points, then the core top-down, then the local tools.
var groupOrder = []string{
	"functions/", "shared/wiring/", "shared/transport/", "shared/service/",
	"shared/domain/", "shared/postgres/", "shared/aws/", "shared/testing/",
	"migrations", "localdev",
}

// layers are the module's layers, lowest first: a package may import its own
// layer and the ones below it, never one above (a rule needed higher up is
// moved down to where its users can reach it).
var layers = []struct {
	name     string
	prefixes []string
}{
	{"domain", []string{"shared/domain/"}},
	{"postgres/aws", []string{"shared/postgres/", "shared/aws/", "migrations"}},
	{"service", []string{"shared/service/"}},
	{"transport", []string{"shared/transport/"}},
	{"wiring", []string{"shared/wiring/", "shared/testing/"}},
	{"functions/localdev", []string{"functions/", "localdev"}},
}

// layerOf is the index in layers of the package at rel, -1 when none holds it.
func layerOf(rel string) int {
	for i, l := range layers {
		for _, p := range l.prefixes {
			if strings.HasPrefix(rel, p) {
				return i
			}
		}
	}
	return -1
}

// upward names each import of pkgs that runs up the layers, and each
// package no layer holds.
func upward(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		from := layerOf(p.rel)
		if from < 0 {
			out = append(out, fmt.Sprintf("%s is in no layer (archmap's layers)", p.rel))
			continue
		}
		for _, d := range p.internal {
			if to := layerOf(d); to > from {
				out = append(out, fmt.Sprintf("%s (%s) imports %s (%s), a layer above it", p.rel, layers[from].name, d, layers[to].name))
			}
		}
	}
	return out
}

func main() {
	write := flag.Bool("write", false, "rewrite the table in the document instead of checking it")
	doc := flag.String("doc", "docs/architecture.md", "the document holding the table, relative to the module root")
	flag.Parse()
	if err := run(*write, *doc, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "archmap:", err)
		os.Exit(1)
	}
}

func run(write bool, doc string, out io.Writer) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	pkgs, err := listPackages(root)
	if err != nil {
		return err
	}
	path := filepath.Join(root, doc)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the document: %w", err)
	}
	if missing, err := checkWalk(root, pkgs, string(b)); err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	} else if len(missing) > 0 {
		return fmt.Errorf("%s: the walks name what the code does not declare: %s", doc, strings.Join(missing, ", "))
	}
	before, table, after, err := splitDoc(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	old, err := parseTable(table)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	rows, missing := buildRows(pkgs, old)
	want := render(rows)
	up := upward(pkgs)
	if !write {
		problems := up
		if want != table {
			problems = append(problems, fmt.Sprintf("the table in %s differs from the tree; run go run ./localdev/archmap -write", doc))
			problems = append(problems, rowDiff(table, want)...)
		}
		for _, p := range missing {
			problems = append(problems, fmt.Sprintf("%s has no description in %s", p, doc))
		}
		if len(problems) > 0 {
			return errors.New(strings.Join(problems, "\n"))
		}
		fmt.Fprintf(out, "%s: the package table matches the tree (%d packages)\n", doc, len(rows))
		return nil
	}
	if err := os.WriteFile(path, []byte(before+want+after), 0o644); err != nil {
		return fmt.Errorf("write the document: %w", err)
	}
	fmt.Fprintf(out, "%s: %d packages\n", doc, len(rows))
	for _, r := range rows {
		if r.filled {
			fmt.Fprintf(out, "new: %s, described from its doc comment; review it\n", r.pkg)
		}
	}
	for _, p := range missing {
		fmt.Fprintf(out, "needs a description: %s\n", p)
	}
	for _, u := range up {
		fmt.Fprintln(out, u)
	}
	if len(missing) > 0 || len(up) > 0 {
		return fmt.Errorf("%d packages need a description in %s, %d imports run up the layers", len(missing), doc, len(up))
	}
	return nil
}

// pkg is one package of the module as go list reports it.
type pkg struct {
	rel      string   // path relative to the module root ("." is the root)
	doc      string   // the package doc comment's first sentence, one line
	internal []string // module packages imported, relative paths
	outside  []string // outside modules imported
}

type listed struct {
	ImportPath string
	Doc        string
	Standard   bool
	Imports    []string
	Module     *struct{ Path string }
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

// listPackages runs go list -deps once over the module's packages: the
// module's own ones and every package they reach, with the module each
// belongs to, so an import resolves to its module without another call.
func listPackages(root string) ([]pkg, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Doc,Standard,Imports,Module", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	modCmd := exec.Command("go", "list", "-m")
	modCmd.Dir = root
	modOut, err := modCmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	module := strings.TrimSpace(string(modOut))

	all := map[string]listed{}
	var own []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list: %w", err)
		}
		all[l.ImportPath] = l
		if l.Module != nil && l.Module.Path == module {
			own = append(own, l)
		}
	}
	rel := func(ip string) string {
		if ip == module {
			return "."
		}
		return strings.TrimPrefix(ip, module+"/")
	}
	var pkgs []pkg
	for _, l := range own {
		p := pkg{rel: rel(l.ImportPath), doc: synopsis(l.Doc)}
		for _, imp := range l.Imports {
			dep, ok := all[imp]
			switch {
			case !ok || dep.Standard:
			case dep.Module != nil && dep.Module.Path == module:
				p.internal = append(p.internal, rel(imp))
			case dep.Module != nil:
				p.outside = append(p.outside, dep.Module.Path)
			}
		}
		slices.Sort(p.internal)
		p.internal = slices.Compact(p.internal)
		slices.Sort(p.outside)
		p.outside = slices.Compact(p.outside)
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b pkg) int {
		if ga, gb := group(a.rel), group(b.rel); ga != gb {
			return ga - gb
		}
		return strings.Compare(a.rel, b.rel)
	})
	return pkgs, nil
}

func group(rel string) int {
	for i, g := range groupOrder {
		if strings.HasPrefix(rel, g) {
			return i
		}
	}
	return len(groupOrder)
}

// synopsis puts go list's Doc (the doc comment's first sentence) on one line.
func synopsis(doc string) string {
	return strings.Join(strings.Fields(doc), " ")
}

// splitDoc cuts the document around the generated table.
func splitDoc(s string) (before, table, after string, err error) {
	i := strings.Index(s, beginMarker+"\n")
	if i < 0 {
		return "", "", "", fmt.Errorf("no %q line", beginMarker)
	}
	before = s[:i+len(beginMarker)+1]
	rest := s[len(before):]
	j := strings.Index(rest, endMarker)
	if j < 0 {
		return "", "", "", fmt.Errorf("no %q line after the begin marker", endMarker)
	}
	return before, rest[:j], rest[j:], nil
}

// parseTable reads the descriptions of the table between the markers,
// keyed by package.
func parseTable(table string) (map[string]string, error) {
	desc := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := splitRow(line)
		if len(cells) < 2 {
			return nil, fmt.Errorf("a row with fewer than two cells: %s", line)
		}
		desc[strings.Trim(cells[0], "`")] = cells[1]
	}
	return desc, nil
}

// splitRow splits a table row on the pipes that are not escaped (\|).
func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

type row struct {
	pkg, desc, internal, outside string
	filled                       bool // described from the doc comment by this run
}

func buildRows(pkgs []pkg, old map[string]string) (rows []row, missing []string) {
	for _, p := range pkgs {
		r := row{pkg: p.rel, desc: old[p.rel]}
		if r.desc == "" && p.doc != "" {
			r.desc, r.filled = strings.ReplaceAll(p.doc, "|", `\|`), true
		}
		if r.desc == "" {
			missing = append(missing, p.rel)
		}
		var in []string
		for _, d := range p.internal {
			in = append(in, "`"+strings.TrimPrefix(d, "shared/")+"`")
		}
		r.internal = strings.Join(in, ", ")
		var outside []string
		for _, m := range p.outside {
			outside = append(outside, strings.TrimPrefix(m, "github.com/"))
		}
		r.outside = strings.Join(outside, ", ")
		rows = append(rows, r)
	}
	return rows, missing
}

func render(rows []row) string {
	var b strings.Builder
	b.WriteString(header)
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.pkg, r.desc, r.internal, r.outside)
	}
	return b.String()
}

// rowDiff names the packages whose rows differ between two tables.
func rowDiff(have, want string) []string {
	rows := func(t string) map[string]string {
		m := map[string]string{}
		for _, line := range strings.Split(t, "\n") {
			if cells := splitRow(strings.TrimSpace(line)); strings.HasPrefix(line, "| `") && len(cells) > 0 {
				m[strings.Trim(cells[0], "`")] = line
			}
		}
		return m
	}
	h, w := rows(have), rows(want)
	var out []string
	for p, line := range w {
		switch old, ok := h[p]; {
		case !ok:
			out = append(out, "  not in the table: "+p)
		case old != line:
			out = append(out, "  row differs: "+p)
		}
	}
	for p := range h {
		if _, ok := w[p]; !ok {
			out = append(out, "  no longer in the tree: "+p)
		}
	}
	slices.Sort(out)
	return out
}

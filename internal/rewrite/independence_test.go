package rewrite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// referenceFiles hold the reference rewriter and the URL oracle, which the
// differential tests, FuzzDifferential and TestURLRulesMatchOracle compare
// the scanner with. A proof shares no code with what it proves.
var referenceFiles = []string{"reference_test.go", "reference_inline_test.go", "reference_foreign_test.go",
	"reference_script_test.go", "urls_oracle_test.go", "tokattrs_test.go", "leftover_test.go"}

// publicAPI is what the reference may use of the package: the API under test.
var publicAPI = map[string]bool{"Rewrite": true, "Options": true, "Stats": true, "ErrWrite": true, "DefaultMaxTokenBytes": true}

// TestReferenceSharesNoCodeWithScanner catches the reference rewriter or the
// URL oracle using the scanner's own code: any identifier declared in the
// package's non-test files other than its public API, any unexported field
// or method of the public types, and any import of this module.
func TestReferenceSharesNoCodeWithScanner(t *testing.T) {
	fset := token.NewFileSet()
	prod, err := productionNames(fset, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range referenceFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Decls) == 0 {
			t.Fatalf("%s declares nothing: is the list of reference files out of date?", name)
		}
		for _, use := range sharedUses(fset, f, prod) {
			t.Errorf("%s", use)
		}
	}
}

// TestSharedUsesFindsScannerCode proves the check above can fail: a file
// that calls the scanner's helpers, names its types or selects an
// unexported field of a public type is reported.
func TestSharedUsesFindsScannerCode(t *testing.T) {
	fset := token.NewFileSet()
	prod, err := productionNames(fset, ".")
	if err != nil {
		t.Fatal(err)
	}
	// The public types have no unexported field or method (Options had the
	// quirks switch once); pretend Options has one.
	prod.selectors["referenceQuirks"] = true
	src := `package rewrite
import "github.com/ssatd/ssatd/internal/ssat"
var _ = ssat.Slot{}
func f(raw []byte, o *Options) {
	for _, a := range scanAttrs(raw, nil) { _ = classifyAttr(raw[a.nameStart:a.nameEnd]) }
	var h hostRewriter
	_, _ = h, o.referenceQuirks
	_ = Rewrite
}`
	f, err := parser.ParseFile(fset, "bad_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(sharedUses(fset, f, prod), "\n")
	for _, want := range []string{"internal/ssat", "scanAttrs", "classifyAttr", "hostRewriter", ".referenceQuirks"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s not reported; reported:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Rewrite ") {
		t.Errorf("the public Rewrite reported:\n%s", got)
	}
}

// prodNames is what the non-test files declare.
type prodNames struct {
	top       map[string]bool // package-level identifiers
	selectors map[string]bool // unexported fields and methods of the public types
}

func productionNames(fset *token.FileSet, dir string) (prodNames, error) {
	p := prodNames{top: map[string]bool{}, selectors: map[string]bool{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return p, err
	}
	var parsed []*ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return p, err
		}
		parsed = append(parsed, f)
	}
	if len(parsed) == 0 {
		return p, os.ErrNotExist
	}
	for _, f := range parsed {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					p.top[d.Name.Name] = true
				} else if recv := recvType(d.Recv.List[0].Type); publicAPI[recv] && !d.Name.IsExported() {
					p.selectors[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						p.top[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok && publicAPI[s.Name.Name] {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									if !n.IsExported() {
										p.selectors[n.Name] = true
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							p.top[n.Name] = true
						}
					}
				}
			}
		}
	}
	return p, nil
}

func recvType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// sharedUses lists the uses in f of what the non-test files declare, other
// than the public API. An identifier counts wherever it is not the name
// after a '.': a local that happens to share a name with the scanner's code
// is reported too, and is to be renamed.
func sharedUses(fset *token.FileSet, f *ast.File, prod prodNames) []string {
	var uses []string
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, "github.com/ssatd/ssatd/") {
			uses = append(uses, fset.Position(imp.Pos()).String()+": imports "+path)
		}
	}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			ast.Inspect(n.X, visit)
			if prod.selectors[n.Sel.Name] {
				uses = append(uses, fset.Position(n.Sel.Pos()).String()+": uses ."+n.Sel.Name)
			}
			return false
		case *ast.Ident:
			if prod.top[n.Name] && !publicAPI[n.Name] {
				uses = append(uses, fset.Position(n.Pos()).String()+": uses "+n.Name+" ")
			}
		}
		return true
	}
	ast.Inspect(f, visit)
	sort.Strings(uses)
	return uses
}

package tsjs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFamilyReachesTheGuestOnlyThroughTheSeam reads the package's own
// source: a route family gets what every route needs from family.Seam,
// and writes no access line, metric or span itself, so it imports neither
// the guest nor what records a request; and it names its reasons by their
// constants, never converting a number to one (the set stays closed).
func TestFamilyReachesTheGuestOnlyThroughTheSeam(t *testing.T) {
	forbidden := []string{
		"github.com/ssatd/ssatd/internal/proxy",
		"github.com/ssatd/ssatd/internal/metrics",
		"github.com/ssatd/ssatd/internal/telemetry",
		"go.opentelemetry.io/",
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	seam := false
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				seam = seam || path == "github.com/ssatd/ssatd/internal/family"
				for _, p := range forbidden {
					if strings.HasPrefix(path, p) {
						t.Errorf("%s imports %s", name, path)
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Reason" {
						t.Errorf("%s: converts a value to family.Reason; use a constant", fset.Position(call.Pos()))
					}
				}
				return true
			})
		}
	}
	if !seam {
		t.Error("no file imports internal/family: the check reads nothing")
	}
}

package queue

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestClockOnly fails naming every read of the machine's clock (time.Now,
// time.Since, time.Until, called or passed as a value) in a non-test file
// of the package outside clock.go: the domain takes its time from
// Opts.Clock, and the engine's pacing from the clock type's methods.
func TestClockOnly(t *testing.T) {
	reads := map[string]bool{"Now": true, "Since": true, "Until": true}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	fset := token.NewFileSet()
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkg := timeImport(f)
		if pkg == "." {
			t.Errorf("%s: imports time with a dot: its clock reads would pass unnamed", name)
		}
		if pkg == "" || name == "clock.go" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == pkg && reads[sel.Sel.Name] {
				t.Errorf("%s: time.%s reads the machine's clock: take the domain's time from e.clock(), pacing from e.clock's methods (clock.go)",
					fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if files < 20 {
		t.Fatalf("read %d non-test files: is the test running in queue's directory?", files)
	}
}

// timeImport is the name f imports package time under, "" when it does
// not.
func timeImport(f *ast.File) string {
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "time" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "time"
		}
	}
	return ""
}

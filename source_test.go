// Package nowserving_test holds checks over the module's whole source
// tree, rules that no single package can check for itself.
package nowserving_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a production function may be, from its func
// line to its closing brace (doc comment not counted).
const maxFuncLines = 80

// longFuncDirs are the directories whose functions may be longer, with the
// reason. Keep it short.
var longFuncDirs = map[string]string{
	// Test support: each conformance scenario reads as one script of steps
	// against a store, which splitting would scatter.
	"queue/store/storetest": "store conformance scenarios",
}

// longFuncs are single functions (file:name, a method as Type.Name) that
// may be longer, each with its reason: table-driven ones, whose length is
// the table. An entry that is no longer over the limit fails the test, so
// that the list stays short.
var longFuncs = map[string]string{}

// TestFuncLength fails naming every function of a non-test .go file of the
// module that is longer than maxFuncLines, except those allowed above.
func TestFuncLength(t *testing.T) {
	long := map[string]int{} // file:name → lines, for every function over the limit
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && skipDir(path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		return funcLengths(path, long)
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d production .go files: is the test running at the module's root?", files)
	}
	for fn, n := range long {
		file := fn[:strings.LastIndex(fn, ":")]
		if _, ok := longFuncs[fn]; ok || longFuncDirs[filepath.ToSlash(filepath.Dir(file))] != "" {
			continue
		}
		t.Errorf("%s is %d lines, over %d: split it, or if it is table-driven add it to longFuncs with the reason", fn, n, maxFuncLines)
	}
	for fn := range longFuncs {
		if _, ok := long[fn]; !ok {
			t.Errorf("longFuncs lists %s, which is not over %d lines (or no longer exists): remove the entry", fn, maxFuncLines)
		}
	}
}

// skipDir reports whether the walk leaves out directory path: test data,
// hidden and underscore directories, and other modules.
func skipDir(path, name string) bool {
	if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

// funcLengths adds every function of the file at path that is over the
// limit to long.
func funcLengths(path string, long map[string]int) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		if n > maxFuncLines {
			long[filepath.ToSlash(path)+":"+funcName(fd)] = n
		}
	}
	return nil
}

// funcName is fd's name, a method's as Type.Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
		case *ast.IndexExpr:
			typ = x.X
		case *ast.IndexListExpr:
			typ = x.X
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		default:
			return fd.Name.Name
		}
	}
}

// TestFuncLengthCounts: a function of maxFuncLines lines passes, one of a
// line more is reported, a method under its type's name.
func TestFuncLengthCounts(t *testing.T) {
	body := strings.Repeat("\t_ = 0\n", maxFuncLines-2)
	src := "package p\n\nfunc fits() {\n" + body + "}\n\ntype T struct{}\n\n// long is one line too long.\nfunc (*T) long() {\n" + body + "\t_ = 1\n}\n"
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	long := map[string]int{}
	if err := funcLengths(path, long); err != nil {
		t.Fatal(err)
	}
	want := filepath.ToSlash(path) + ":T.long"
	if len(long) != 1 || long[want] != maxFuncLines+1 {
		t.Errorf("got %v, want only %s at %d lines", long, want, maxFuncLines+1)
	}
}

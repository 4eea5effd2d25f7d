package nowserving_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/nowserving/nowserving"

// layers are the module's packages from the innermost out (STYLE.md,
// "Layout and dependencies": dependencies point inward to queue, cmd sees
// everything). A package may import packages of its own layer or a lower
// one, never one further out. A package is placed by its longest listed
// prefix; one placed nowhere fails the test, so a new package is given its
// place here.
var layers = [][]string{
	// the domain, the wire format, the pure device renderers, helpers
	{"internal", "queue", "protocol/wire", "devices/escpos", "devices/led", "devices/voice"},
	// what reads the domain's events or records them
	{"view", "follow", "queue/store/sqlstore", "staff"},
	// the stores, the protocol, the device dispatcher, the workers
	{"queue/store", "protocol", "devices", "booking", "report", "notify", "metrics"},
	// what people and other programs use
	{"config", "web", "tui", "sim", "load", "conform"},
	// the serve process's parts, then the binary
	{"daemon"},
	{"cmd"},
}

// layerOf returns the layer of the module-relative package path p, or -1.
func layerOf(p string) int {
	best, at := -1, ""
	for i, l := range layers {
		for _, prefix := range l {
			if (p == prefix || strings.HasPrefix(p, prefix+"/")) && len(prefix) > len(at) {
				best, at = i, prefix
			}
		}
	}
	return best
}

// stdlibOnly are the packages that import only the standard library.
var stdlibOnly = []string{"queue", "protocol/wire"}

// TestLayers fails on an import of a non-test file that runs from an inner
// layer out, a device driver that imports queue, viper outside config, a
// package outside the standard library in queue or protocol/wire, and the
// test kit in a product package (test kits are the packages named *test).
func TestLayers(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == filepath.Base(path) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		from := layerOf(pkg)
		if from < 0 {
			t.Errorf("%s: package %s has no layer in layers_test.go", path, pkg)
			return nil
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			checkImport(t, path, pkg, f.Name.Name, from, ip)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkImport checks one import ip of file path, of package pkg (named
// name, in layer from).
func checkImport(t *testing.T, path, pkg, name string, from int, ip string) {
	t.Helper()
	inModule := strings.HasPrefix(ip, module+"/")
	for _, p := range stdlibOnly {
		if pkg == p && (inModule || strings.Contains(strings.SplitN(ip, "/", 2)[0], ".")) {
			t.Errorf("%s: %s imports %s: it imports only the standard library", path, pkg, ip)
		}
	}
	if strings.HasPrefix(ip, "github.com/spf13/viper") && pkg != "config" {
		t.Errorf("%s: viper outside config/", path)
	}
	if !inModule {
		return
	}
	to := strings.TrimPrefix(ip, module+"/")
	if strings.HasPrefix(pkg, "devices/") && (to == "queue" || strings.HasPrefix(to, "queue/")) {
		t.Errorf("%s: the device driver %s imports %s: drivers never import queue", path, pkg, to)
	}
	if strings.HasPrefix(to, "internal/testkit/") && !strings.HasSuffix(name, "test") {
		t.Errorf("%s: the product package %s imports the test kit %s", path, pkg, to)
	}
	if l := layerOf(to); l > from {
		t.Errorf("%s: %s (layer %d) imports %s (layer %d), further out", path, pkg, from, to, l)
	}
}

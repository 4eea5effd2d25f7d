package web

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestPageFiles: every page of static/ renders to a whole document whose
// stylesheets and scripts (named through the shared partials) are
// embedded files.
func TestPageFiles(t *testing.T) {
	if len(pageFiles) < 6 {
		t.Fatalf("%d pages rendered", len(pageFiles))
	}
	loads := regexp.MustCompile(`<(?:script src|link rel="stylesheet" href)="/static/([^"]+)"`)
	for name, page := range pageFiles {
		b := string(page)
		if !strings.HasPrefix(b, "<!doctype html>\n<html lang=\"en\">\n<head>\n") || !strings.HasSuffix(b, "</script>\n</body>\n</html>\n") ||
			strings.Contains(b, "{{") {
			t.Errorf("%s is not a whole page:\n%s", name, b)
		}
		ms := loads.FindAllStringSubmatch(b, -1)
		if len(ms) < 3 {
			t.Errorf("%s loads %d files, want its style and scripts", name, len(ms))
		}
		for _, m := range ms {
			file := "static/" + m[1]
			if w, ok := strings.CutPrefix(m[1], "words/"); ok {
				file = "static/words/" + strings.TrimSuffix(w, ".js") + ".json" // served by catalogScript
			}
			if _, err := fs.Stat(files, file); err != nil {
				t.Errorf("%s loads /static/%s: %v", name, m[1], err)
			}
		}
	}
}

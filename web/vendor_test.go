package web

import (
	"bufio"
	"bytes"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestVendored: every library named in static/vendor/VERSIONS is there
// with its licence and the version it claims, and no page or script loads
// anything from another host (halls and hospital networks are often
// offline: everything comes from the daemon).
func TestVendored(t *testing.T) {
	sc := bufio.NewScanner(bytes.NewReader(embedded(t, "static/vendor/VERSIONS")))
	n := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		name, version, licence := f[0], f[1], f[2]
		n++
		js := embedded(t, "static/vendor/"+name+".min.js")
		if !bytes.Contains(js[:min(len(js), 200)], []byte("(v"+version+")")) {
			t.Errorf("%s.min.js does not say version %s in its header", name, version)
		}
		if lic := embedded(t, "static/vendor/"+name+".LICENSE"); !bytes.Contains(lic, []byte(licence+" License")) {
			t.Errorf("%s.LICENSE is not the %s licence", name, licence)
		}
	}
	if n == 0 {
		t.Fatal("VERSIONS names no library")
	}
	remote := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import\s+url\(\s*["']?(https?:)?//|fetch\(\s*["']https?://`)
	err := fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(p, "static/vendor/") {
			return err
		}
		b := embedded(t, p)
		if page, ok := pageFiles[p]; ok {
			b = page // a page as served, with its shared head and scripts
		}
		if m := remote.Find(b); m != nil {
			t.Errorf("%s loads from another host: %s", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package tui

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestConsoleWords: every language of words.json has every key the others
// have, and every text the console's code puts in a language whole
// (t("…") or tf("…", …)) is a key of each, so no screen shows one English
// text among its own words.
func TestConsoleWords(t *testing.T) {
	if err := consoleWords.Check(); err != nil {
		t.Error(err)
	}
	if langs := consoleWords.Langs(); !slices.Equal(langs, []string{"pt", "zh"}) {
		t.Errorf("console languages %v, want pt and zh", langs)
	}
	files, _ := filepath.Glob("*.go")
	call := regexp.MustCompile(`\btf?\(("(?:[^"\\]|\\.)*")\s*[,)]`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllSubmatch(src, -1) {
			text, err := strconv.Unquote(string(m[1]))
			if err != nil {
				t.Fatalf("%s: %s: %v", f, m[1], err)
			}
			n++
			for _, l := range consoleWords.Langs() {
				if _, ok := consoleWords[l][text]; !ok {
					t.Errorf("%s: %s has no word for %q", f, l, text)
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("found %d texts the console translates, want the 90 or so it has", n)
	}
}

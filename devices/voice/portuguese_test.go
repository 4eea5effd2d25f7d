package voice

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCardinalPortuguese(t *testing.T) {
	pt := Portuguese()
	for n, want := range map[int]string{
		0: "zero", 5: "cinco", 16: "dezesseis", 20: "vinte", 23: "vinte e três", 100: "cem",
		101: "cento e um", 123: "cento e vinte e três", 200: "duzentos", 999: "novecentos e noventa e nove",
		1000: "mil", 1005: "mil e cinco", 1100: "mil e cem", 1234: "mil duzentos e trinta e quatro", 2350: "dois mil trezentos e cinquenta",
	} {
		got, err := pt.Speech(cardinalPortuguese(n))
		if err != nil || got != want {
			t.Errorf("cardinalPortuguese(%d) = %q, %v, want %q", n, got, err, want)
		}
	}
}

func TestPortuguesePhrase(t *testing.T) {
	p, err := Portuguese().Phrase(Call{Number: "A023", Counter: "12"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != "Senha A023, guichê 12" || p.Speech != "Senha á zero dois três guichê doze" {
		t.Errorf("phrase %q / %q", p.Text, p.Speech)
	}
	// Every token has its recording in the embedded pack.
	pack := EmbeddedPack()
	for _, tok := range p.Tokens {
		if _, err := pack.Segment("pt", tok); err != nil {
			t.Errorf("segment %q: %v", tok, err)
		}
	}
}

// TestPackMatchesWords: each language's folder of the voice pack holds
// exactly one recording per token of its LANG.words, the file
// generate.sh records it from, so a language is added by writing the
// file and running generate.sh LANG.
func TestPackMatchesWords(t *testing.T) {
	words, _ := filepath.Glob("pack/*.words")
	if len(words) < 3 {
		t.Fatalf("words files: %v", words)
	}
	for _, f := range words {
		lang := strings.TrimSuffix(filepath.Base(f), ".words")
		w, err := packWords(lang)
		if err != nil {
			t.Fatal(err)
		}
		var toks, wavs []string
		for tok := range w {
			toks = append(toks, tok+".wav")
		}
		entries, err := os.ReadDir(filepath.Join("pack", lang))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			wavs = append(wavs, e.Name())
		}
		slices.Sort(toks)
		slices.Sort(wavs)
		if !slices.Equal(toks, wavs) {
			t.Errorf("pack/%s holds %v, pack/%s.words names %v", lang, wavs, lang, toks)
		}
		l, ok := DefaultLanguages()[lang]
		if !ok {
			t.Errorf("pack/%s.words has no language in DefaultLanguages", lang)
			continue
		}
		if err := l.Validate(); err != nil {
			t.Errorf("language %s: %v", lang, err)
		}
		for tok, text := range l.Words {
			if w[tok] != text {
				t.Errorf("language %s: token %q speaks %q, pack/%s.words %q", lang, tok, text, lang, w[tok])
			}
		}
	}
	// The voice each words file names.
	for _, f := range words {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		voice := false
		for sc.Scan() {
			voice = voice || strings.HasPrefix(sc.Text(), "# voice: ")
		}
		fh.Close()
		if !voice {
			t.Errorf("%s has no '# voice: V' line", f)
		}
	}
}

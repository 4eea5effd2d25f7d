package voice

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// NumeralsPortuguese: tokens "0".."19", "20".."90", "and" (spoken "e"), "cem",
// "cento", "200".."900", "mil".
const NumeralsPortuguese = "pt"

// Portuguese is the default (Brazilian) Portuguese language: "Senha A023,
// guichê 5", numbers read digit by digit, counters as numbers, letters by
// their Portuguese names. Its words are those of the voice pack's
// pt.words, from which pack/generate.sh makes the recordings.
func Portuguese() Language {
	w, err := packWords("pt")
	if err != nil {
		panic(err) // the embedded file is checked by the tests
	}
	return Language{
		Code: "pt",
		Call: Template{
			Text:   "Senha {number}, guichê {counter}",
			Tokens: "senha {number} guiche {counter}",
		},
		Words:    w,
		Numerals: NumeralsPortuguese,
		Number:   Digits,
		Counter:  Cardinal,
	}
}

// portugueseNumerals are the tokens NumeralsPortuguese reads numbers with.
func portugueseNumerals() []string {
	t := []string{"and", "cem", "cento", "mil"}
	for i := range 20 {
		t = append(t, strconv.Itoa(i))
	}
	for i := 20; i < 100; i += 10 {
		t = append(t, strconv.Itoa(i))
	}
	for i := 200; i < 1000; i += 100 {
		t = append(t, strconv.Itoa(i))
	}
	return t
}

// cardinalPortuguese reads 0 <= n <= 9999: 23 is "vinte e três" (20 e 3),
// 100 "cem", 123 "cento e vinte e três", 1005 "mil e cinco", 2350 "dois mil
// trezentos e cinquenta".
func cardinalPortuguese(n int) []string {
	if n == 0 {
		return []string{"0"}
	}
	var t []string
	if n >= 1000 {
		if n/1000 > 1 {
			t = append(t, underThousandPT(n/1000)...)
		}
		t = append(t, "mil")
		n %= 1000
		if n == 0 {
			return t
		}
		if n <= 100 || n%100 == 0 {
			t = append(t, "and")
		}
	}
	return append(t, underThousandPT(n)...)
}

// underThousandPT reads 1 <= n <= 999.
func underThousandPT(n int) []string {
	var t []string
	switch h := n / 100; {
	case n == 100:
		return []string{"cem"}
	case h == 1:
		t = append(t, "cento")
	case h > 1:
		t = append(t, strconv.Itoa(h*100))
	}
	n %= 100
	if n == 0 {
		return t
	}
	if len(t) > 0 {
		t = append(t, "and")
	}
	if n < 20 {
		return append(t, strconv.Itoa(n))
	}
	t = append(t, strconv.Itoa(n/10*10))
	if n%10 != 0 {
		t = append(t, "and", strconv.Itoa(n%10))
	}
	return t
}

// packWords reads pack/LANG.words, the tokens of a language and the text
// espeak-ng speaks for each (generate.sh records them from the same file).
func packWords(lang string) (map[string]string, error) {
	b, err := packFS.ReadFile("pack/" + lang + ".words")
	if err != nil {
		return nil, fmt.Errorf("voice: words of %s: %w", lang, err)
	}
	w := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tok, text, ok := strings.Cut(line, "\t")
		if !ok || tok == "" || text == "" {
			return nil, fmt.Errorf("voice: pack/%s.words:%d: want TOKEN<TAB>TEXT, got %q", lang, n, line)
		}
		w[tok] = text
	}
	return w, nil
}

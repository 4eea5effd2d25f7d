package voice

import (
	"fmt"
	"strconv"
	"strings"
)

// Call is what is announced: a ticket number called to a counter.
type Call struct {
	// Number is the ticket's display text, e.g. "A023".
	Number string
	// Counter is the counter's number or name, e.g. "5".
	Counter string
	// Recall marks a call announced again; it uses the language's Recall
	// template and is never merged with an earlier announcement.
	Recall bool
	// Langs, when not empty, overrides the announcer's languages for this
	// call (codes such as "en", "zh", in speaking order).
	Langs []string
}

// NumberMode says how a run of digits is read.
type NumberMode string

const (
	// Digits reads digit by digit: "023" is "zero two three" / "零二三".
	Digits NumberMode = "digits"
	// Cardinal reads a number: "023" is "twenty-three" / "二十三". Runs of more
	// than four digits are read digit by digit.
	Cardinal NumberMode = "number"
)

// Numeral rule sets for [Language.Numerals].
const (
	// NumeralsEnglish: tokens "0".."19", "20".."90", "hundred", "thousand".
	NumeralsEnglish = "en"
	// NumeralsChinese: tokens "0".."9", "10" (十), "hundred" (百), "thousand" (千), with 零 for inner zeros.
	NumeralsChinese = "zh"
)

// Template is one sentence of a language. Text and Tokens may hold the
// placeholders {number} and {counter}.
type Template struct {
	// Text is the written sentence, e.g. "Number {number}, please go to counter {counter}".
	Text string
	// Tokens is the spoken sentence as space-separated tokens, e.g.
	// "number {number} please_go_to_counter {counter}". Each literal token
	// needs a recording in the voice pack and an entry in [Language.Words].
	Tokens string
}

// Language holds how calls are announced in one language.
type Language struct {
	// Code names the language ("en", "zh") and the voice pack folder.
	Code string
	// Call is the sentence for a first call.
	Call Template
	// Recall is the sentence for a recall; empty means Call.
	Recall Template
	// Words maps each token to the text a TTS command speaks for it. A
	// single letter A-Z with no entry is spoken as itself.
	Words map[string]string
	// Numerals names the rules for reading numbers: [NumeralsEnglish] or [NumeralsChinese].
	Numerals string
	// Number is how the digits of the ticket number are read.
	Number NumberMode
	// Counter is how the digits of the counter are read.
	Counter NumberMode
}

// Phrase is one sentence ready for an [Engine].
type Phrase struct {
	// Lang is the language code.
	Lang string
	// Text is the written sentence, for displays and logs.
	Text string
	// Tokens is the spoken sentence, one pack segment per token.
	Tokens []string
	// Speech is the text a TTS command speaks: the words of the tokens.
	Speech string
}

// English is the default English language: "Number A023, please go to
// counter 5", numbers read digit by digit, counters as numbers.
func English() Language {
	w := map[string]string{
		"number":               "Number",
		"please_go_to_counter": "please go to counter",
		"hundred":              "hundred",
		"thousand":             "thousand",
	}
	small := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
		"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	for i, s := range small {
		w[strconv.Itoa(i)] = s
	}
	tens := []string{"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	for i, s := range tens {
		w[strconv.Itoa((i+2)*10)] = s
	}
	return Language{
		Code: "en",
		Call: Template{
			Text:   "Number {number}, please go to counter {counter}",
			Tokens: "number {number} please_go_to_counter {counter}",
		},
		Words:    w,
		Numerals: NumeralsEnglish,
		Number:   Digits,
		Counter:  Cardinal,
	}
}

// Chinese is the default Mandarin language: "请 A023 号 到 5 号窗口", spoken
// in tone-numbered pinyin, numbers read digit by digit, counters as numbers.
func Chinese() Language {
	w := map[string]string{
		"qing":          "qing3",
		"hao":           "hao4",
		"dao":           "dao4",
		"hao_chuangkou": "hao4 chuang1 kou3",
		"10":            "shi2",
		"hundred":       "bai3",
		"thousand":      "qian1",
	}
	for i, s := range []string{"ling2", "yi1", "er4", "san1", "si4", "wu3", "liu4", "qi1", "ba1", "jiu3"} {
		w[strconv.Itoa(i)] = s
	}
	return Language{
		Code: "zh",
		Call: Template{
			Text:   "请 {number} 号 到 {counter} 号窗口",
			Tokens: "qing {number} hao dao {counter} hao_chuangkou",
		},
		Words:    w,
		Numerals: NumeralsChinese,
		Number:   Digits,
		Counter:  Cardinal,
	}
}

// DefaultLanguages returns [English], [Chinese] and [Portuguese] by code.
func DefaultLanguages() map[string]Language {
	return map[string]Language{"en": English(), "zh": Chinese(), "pt": Portuguese()}
}

// Validate checks that the templates use only known placeholders and that
// every token the language can produce has a word.
func (l Language) Validate() error {
	if l.Code == "" {
		return fmt.Errorf("voice: language: code: required")
	}
	var numerals []string
	switch l.Numerals {
	case NumeralsEnglish:
		numerals = []string{"hundred", "thousand"}
		for i := range 20 {
			numerals = append(numerals, strconv.Itoa(i))
		}
		for i := 20; i < 100; i += 10 {
			numerals = append(numerals, strconv.Itoa(i))
		}
	case NumeralsChinese:
		numerals = []string{"10", "hundred", "thousand"}
		for i := range 10 {
			numerals = append(numerals, strconv.Itoa(i))
		}
	case NumeralsPortuguese:
		numerals = portugueseNumerals()
	default:
		return fmt.Errorf("voice: language %s: numerals: %q is not %q, %q or %q", l.Code, l.Numerals, NumeralsEnglish, NumeralsChinese, NumeralsPortuguese)
	}
	for _, m := range []struct {
		name string
		mode NumberMode
	}{{"number", l.Number}, {"counter", l.Counter}} {
		if m.mode != Digits && m.mode != Cardinal {
			return fmt.Errorf("voice: language %s: %s: mode %q is not %q or %q", l.Code, m.name, m.mode, Digits, Cardinal)
		}
	}
	for _, tok := range numerals {
		if _, ok := l.Words[tok]; !ok {
			return fmt.Errorf("voice: language %s: words: no word for token %q", l.Code, tok)
		}
	}
	for _, t := range []struct {
		name string
		tpl  Template
	}{{"call", l.Call}, {"recall", l.Recall}} {
		if t.tpl == (Template{}) && t.name == "recall" {
			continue
		}
		if strings.TrimSpace(t.tpl.Tokens) == "" {
			return fmt.Errorf("voice: language %s: %s.tokens: required", l.Code, t.name)
		}
		if err := checkPlaceholders(t.tpl.Text); err != nil {
			return fmt.Errorf("voice: language %s: %s.text: %w", l.Code, t.name, err)
		}
		for _, tok := range strings.Fields(t.tpl.Tokens) {
			if tok == "{number}" || tok == "{counter}" {
				continue
			}
			if strings.ContainsAny(tok, "{}/\\.") {
				return fmt.Errorf("voice: language %s: %s.tokens: bad token %q", l.Code, t.name, tok)
			}
			if _, err := l.word(tok); err != nil {
				return fmt.Errorf("voice: language %s: %s.tokens: %w", l.Code, t.name, err)
			}
		}
	}
	return nil
}

func checkPlaceholders(s string) error {
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			return nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return fmt.Errorf("unclosed placeholder in %q", s)
		}
		if p := s[i : i+j+1]; p != "{number}" && p != "{counter}" {
			return fmt.Errorf("unknown placeholder %s", p)
		}
		s = s[i+j+1:]
	}
}

func (l Language) word(tok string) (string, error) {
	if w, ok := l.Words[tok]; ok {
		return w, nil
	}
	if len(tok) == 1 && tok[0] >= 'A' && tok[0] <= 'Z' {
		return tok, nil
	}
	return "", fmt.Errorf("no word for token %q", tok)
}

// Phrase builds the sentence announcing c in l.
func (l Language) Phrase(c Call) (Phrase, error) {
	tpl := l.Call
	if c.Recall && l.Recall != (Template{}) {
		tpl = l.Recall
	}
	num, err := l.read(c.Number, l.Number)
	if err != nil {
		return Phrase{}, fmt.Errorf("voice: phrase %s: number: %w", l.Code, err)
	}
	ctr, err := l.read(c.Counter, l.Counter)
	if err != nil {
		return Phrase{}, fmt.Errorf("voice: phrase %s: counter: %w", l.Code, err)
	}
	var toks []string
	for _, f := range strings.Fields(tpl.Tokens) {
		switch f {
		case "{number}":
			toks = append(toks, num...)
		case "{counter}":
			toks = append(toks, ctr...)
		default:
			toks = append(toks, f)
		}
	}
	speech, err := l.Speech(toks)
	if err != nil {
		return Phrase{}, err
	}
	text := strings.NewReplacer("{number}", c.Number, "{counter}", c.Counter).Replace(tpl.Text)
	return Phrase{Lang: l.Code, Text: text, Tokens: toks, Speech: speech}, nil
}

// Speech joins the words of tokens into the text a TTS command speaks.
func (l Language) Speech(tokens []string) (string, error) {
	words := make([]string, 0, len(tokens))
	for _, t := range tokens {
		w, err := l.word(t)
		if err != nil {
			return "", fmt.Errorf("voice: speech %s: %w", l.Code, err)
		}
		words = append(words, w)
	}
	return strings.Join(words, " "), nil
}

// read splits s into letters and digit runs and reads them: letters one by
// one (upper-cased), digit runs per mode. Other characters are skipped.
func (l Language) read(s string, mode NumberMode) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch >= '0' && ch <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			toks = append(toks, l.readDigits(s[i:j], mode)...)
			i = j
		case ch >= 'a' && ch <= 'z':
			toks = append(toks, string(ch-'a'+'A'))
			i++
		case ch >= 'A' && ch <= 'Z':
			toks = append(toks, string(ch))
			i++
		default:
			i++
		}
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("nothing to read in %q", s)
	}
	return toks, nil
}

func (l Language) readDigits(run string, mode NumberMode) []string {
	trimmed := strings.TrimLeft(run, "0")
	if mode != Cardinal || len(trimmed) > 4 {
		toks := make([]string, len(run))
		for i := range run {
			toks[i] = run[i : i+1]
		}
		return toks
	}
	n, _ := strconv.Atoi("0" + trimmed) // at most four digits: cannot fail
	switch l.Numerals {
	case NumeralsChinese:
		return cardinalChinese(n)
	case NumeralsPortuguese:
		return cardinalPortuguese(n)
	}
	return cardinalEnglish(n)
}

// cardinalEnglish reads 0 <= n <= 9999: 123 is "1 hundred 20 3".
func cardinalEnglish(n int) []string {
	if n == 0 {
		return []string{"0"}
	}
	var t []string
	if n >= 1000 {
		t = append(t, strconv.Itoa(n/1000), "thousand")
		n %= 1000
	}
	if n >= 100 {
		t = append(t, strconv.Itoa(n/100), "hundred")
		n %= 100
	}
	switch {
	case n == 0:
	case n < 20:
		t = append(t, strconv.Itoa(n))
	default:
		t = append(t, strconv.Itoa(n/10*10))
		if n%10 != 0 {
			t = append(t, strconv.Itoa(n%10))
		}
	}
	return t
}

// cardinalChinese reads 0 <= n <= 9999: 23 is 二十三 "2 10 3", 13 is 十三
// "10 3", 105 is 一百零五 "1 hundred 0 5", 1050 is 一千零五十.
func cardinalChinese(n int) []string {
	if n == 0 {
		return []string{"0"}
	}
	units := []string{"thousand", "hundred", "10", ""}
	digits := []int{n / 1000, n / 100 % 10, n / 10 % 10, n % 10}
	var t []string
	zero := false // a zero is pending between two spoken digits
	for i, d := range digits {
		if d == 0 {
			zero = len(t) > 0
			continue
		}
		if zero {
			t = append(t, "0")
			zero = false
		}
		if !(i == 2 && d == 1 && len(t) == 0) { // 十三, not 一十三
			t = append(t, strconv.Itoa(d))
		}
		if units[i] != "" {
			t = append(t, units[i])
		}
	}
	return t
}

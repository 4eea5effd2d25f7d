package tui

import (
	"embed"
	"fmt"

	"github.com/nowserving/nowserving/internal/words"
)

//go:embed words.json
var wordFiles embed.FS

// consoleWords are the console's own words (its chrome: titles, column
// heads, states, help, the answers of its actions, and event:KIND,
// device:KIND, detail:TEXT and refusal:TEXT for the event kinds, devices,
// their health and the protocol's refusals) in the languages beside
// English, keyed by the English text, from the catalog words.json, so a
// screen is in one language: the one of Opts.Lang. A language not there,
// and a text not in its words, are English. Every language has every key
// (TestConsoleWords).
var consoleWords = words.Must(wordFiles, "words.json")

// translator returns the function that puts a text of the console in
// lang ("" or one not in consoleWords: English).
func translator(lang string) func(string) string {
	w := consoleWords[words.Base(lang)]
	return func(s string) string {
		if t, ok := w[s]; ok {
			return t
		}
		return s
	}
}

// tf is fmt.Sprintf of the translation of format.
func (m *Model) tf(format string, args ...any) string { return fmt.Sprintf(m.t(format), args...) }

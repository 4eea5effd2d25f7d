// Package words holds the words people read, in each language, as data: a
// catalog is a JSON object of language, then key, then text, kept in a file
// that a translator edits without touching code and that the program
// embeds. It imports only the standard library.
package words

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
)

// Catalog is words by language, then key.
type Catalog map[string]map[string]string

// Read parses the catalog file name of fsys.
func Read(fsys fs.FS, name string) (Catalog, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("words: read catalog: %w", err)
	}
	var c Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("words: catalog %s: %w", name, err)
	}
	return c, nil
}

// Must is Read for a catalog embedded in the program, which its package's
// tests read and Check: it panics where Read fails.
func Must(fsys fs.FS, name string) Catalog {
	c, err := Read(fsys, name)
	if err != nil {
		panic(err)
	}
	return c
}

// Words are the words of lang, else English ones (nil where c has no
// English, as where the keys are the English text).
func (c Catalog) Words(lang string) map[string]string {
	if w, ok := c[lang]; ok {
		return w
	}
	return c["en"]
}

// Langs are the languages of c, sorted.
func (c Catalog) Langs() []string { return slices.Sorted(maps.Keys(c)) }

// Check says every word a language of c lacks: each language has every key
// that any other has, none of them empty, so no screen falls back to
// another language where a word was forgotten.
func (c Catalog) Check() error {
	keys := map[string]string{} // key → a language that has it
	for _, l := range c.Langs() {
		for k := range c[l] {
			if _, ok := keys[k]; !ok {
				keys[k] = l
			}
		}
	}
	var errs []error
	for _, l := range c.Langs() {
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if c[l][k] == "" {
				errs = append(errs, fmt.Errorf("words: %s has no word %q (%s has)", l, k, keys[k]))
			}
		}
	}
	return errors.Join(errs...)
}

// Base is the base language of a tag, lower case: "pt-BR" → "pt".
func Base(tag string) string {
	b, _, _ := strings.Cut(strings.ToLower(tag), "-")
	return b
}

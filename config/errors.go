package config

import (
	"fmt"
	"regexp"
	"strings"
)

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Key is the path of the offending key, e.g. "sites[0].services[1].width";
	// empty for the document as a whole.
	Key string
	// Msg says why, e.g. "must be 1..6, got 9".
	Msg string
}

// String formats the problem as "key: msg".
func (p Problem) String() string {
	if p.Key == "" {
		return p.Msg
	}
	return p.Key + ": " + p.Msg
}

// Error lists every problem found in a configuration. Load and Validate
// return it as *Error; use errors.As to get the list.
type Error struct {
	// File is the configuration file, if any.
	File     string
	Problems []Problem
}

// Error formats one problem on one line, several one per line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if len(e.Problems) == 1 {
		b.WriteString(e.Problems[0].String())
		return b.String()
	}
	fmt.Fprintf(&b, "%d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.String())
	}
	return b.String()
}

// problems collects Problems during decoding and validation.
type problems []Problem

func (ps *problems) add(key, format string, args ...any) {
	*ps = append(*ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// match adds a problem at key when v is empty or does not match re; want
// says what it must be ("must be ...").
func (ps *problems) match(key, v string, re *regexp.Regexp, want string) {
	switch {
	case v == "":
		ps.add(key, "required")
	case !re.MatchString(v):
		ps.add(key, "%s, got %q", want, v)
	}
}

// unique records in at that entry i of the list at key list holds id, or,
// when an earlier entry holds it, adds a problem at key and reports false.
// what names the id in the message; an empty id is never a duplicate.
func (ps *problems) unique(at map[string]int, i int, id, key, what, list string) bool {
	if j, dup := at[id]; dup && id != "" {
		ps.add(key, "duplicate %s %q (also %s[%d])", what, id, list, j)
		return false
	}
	at[id] = i
	return true
}

// idList checks the ids of one list's entries (a site's counters, its
// resources, the printers): each required, matching re (want says how)
// and unique in the list.
type idList struct {
	key  string // the list's key, e.g. "sites[0].counters"
	what string // what the ids are, in messages: "counter id"
	re   *regexp.Regexp
	want string
	at   map[string]int // the index of each id checked
}

func newIDList(key, what string, re *regexp.Regexp, want string) *idList {
	return &idList{key: key, what: what, re: re, want: want, at: map[string]int{}}
}

// check checks the id of entry i and returns the entry's key.
func (l *idList) check(i int, id string, ps *problems) string {
	k := keyf("%s[%d]", l.key, i)
	ps.match(k+".id", id, l.re, l.want)
	ps.unique(l.at, i, id, k+".id", l.what, l.key)
	return k
}

func keyf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

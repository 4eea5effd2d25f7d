package web

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"path"

	"github.com/nowserving/nowserving/queue"
)

// The pages of static/ (static/*.html) are html/template files. What
// every page has around its own markup is shared: the head, which opens
// the body ({{template "head" page TITLE BODY-CLASS STYLESHEET...}}), and
// the scripts that end it ({{template "scripts" list SCRIPT...}}), each
// file named under /static/. The staff pages share their logout form
// ({{template "logout"}}) and their dialogs' submit and cancel buttons
// ({{template "dialog-buttons" button ID WORD TEXT}}: the submit button's
// id, data-w word and English text). A page may define partials of its
// own for markup it repeats (admin.html's account access fields).
//
// The pages are rendered once, from the embedded files, when the package
// loads; a site's languages are set per request (pageFor).
const pageParts = `{{define "head"}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
{{range .Styles}}<link rel="stylesheet" href="/static/{{.}}">
{{end}}</head>
<body class="{{.Class}}">{{end}}
{{- define "logout"}}<form method="post" action="/logout" id="logout-form"><input type="hidden" name="csrf" id="logout-csrf">
    <button type="submit" class="quiet" id="logout" data-w="logout">Log out</button></form>{{end}}
{{- define "dialog-buttons"}}<div class="row"><button type="submit" class="primary" id="{{.ID}}" data-w="{{.Word}}">{{.Text}}</button>
      <button type="button" class="quiet" data-close data-w="cancel">Cancel</button></div>{{end}}
{{- define "scripts"}}{{range .}}<script src="/static/{{.}}"></script>
{{end}}</body>
</html>{{end}}`

// pageHead is what the head partial says of a page.
type pageHead struct {
	Title, Class string
	Styles       []string
}

// pageButton is a button of a page: its id, its data-w word and its
// English text.
type pageButton struct{ ID, Word, Text string }

var pageFuncs = template.FuncMap{
	"page": func(title, class string, styles ...string) pageHead {
		return pageHead{Title: title, Class: class, Styles: styles}
	},
	"list":   func(s ...string) []string { return s },
	"button": func(id, word, text string) pageButton { return pageButton{ID: id, Word: word, Text: text} },
}

// pageFiles are the rendered pages of static/ by file name ("static/counter.html").
var pageFiles = renderPages()

func renderPages() map[string][]byte {
	parts := template.Must(template.New("parts").Funcs(pageFuncs).Parse(pageParts))
	names, err := fs.Glob(files, "static/*.html")
	if err != nil || len(names) == 0 {
		panic(fmt.Sprintf("web: no pages in static/ (%v)", err))
	}
	out := map[string][]byte{}
	for _, name := range names {
		t := template.Must(template.Must(parts.Clone()).ParseFS(files, name))
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, path.Base(name), nil); err != nil {
			panic(fmt.Sprintf("web: page %s: %v", name, err))
		}
		out[name] = b.Bytes()
	}
	return out
}

// pageOf is the page name; given a site, in that site's languages
// (pageFor).
func pageOf(name string, site *queue.Site) ([]byte, error) {
	b, ok := pageFiles[name]
	if !ok {
		return nil, fmt.Errorf("web: no page %s", name)
	}
	if site != nil {
		b = pageFor(b, site)
	}
	return b, nil
}

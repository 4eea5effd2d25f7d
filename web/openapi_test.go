package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// TestOpenAPIMatchesRoutes: every route of the mux is documented in
// openapi.yaml with its method, and the file documents no other.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	b := embedded(t, "openapi.yaml")
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
	var documented, served []string
	for path, ops := range doc.Paths {
		for m := range ops {
			switch m {
			case "get", "post", "put", "patch", "delete", "head", "options":
				documented = append(documented, strings.ToUpper(m)+" "+path)
			}
		}
	}
	e := newEnv(t, nil)
	for _, r := range e.srv.routes() {
		// "/{$}" is the mux's exact "/"; OpenAPI writes it "/".
		served = append(served, r.method+" "+strings.TrimSuffix(r.path, "{$}"))
	}
	slices.Sort(documented)
	slices.Sort(served)
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in openapi.yaml", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.yaml documents %s, which is not served", d)
		}
	}
}

// TestMain runs the tests, then, when the whole package ran and passed,
// holds what they made the server answer against openapi.yaml
// (checkAnswers).
func TestMain(m *testing.M) {
	code := m.Run()
	whole := true
	for _, f := range []string{"test.run", "test.skip", "test.list"} {
		whole = whole && flag.Lookup(f).Value.String() == ""
	}
	if code == 0 && whole {
		if problems := checkAnswers(); len(problems) > 0 {
			fmt.Fprintf(os.Stderr, "openapi.yaml and the answers of the tests disagree:\n  %s\n", strings.Join(problems, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// anyAPICall reports whether any API call (/api/v1/sites/{site}/...) may
// answer status with code, which the error table lists and each
// operation's default response covers: no token or a token not for the
// site, no such site, a fault, a store in trouble or a shutdown.
func anyAPICall(status int, code string) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusInternalServerError, http.StatusServiceUnavailable:
		return true
	}
	return status == http.StatusNotFound && code == "unknown_site"
}

// openapiDoc is what checkAnswers reads of openapi.yaml: each operation's
// responses, and the error table of info.description (status to codes).
type openapiDoc struct {
	ops   map[string][]string // "POST /api/v1/..." -> "201", "409", "default"
	table map[string]int      // problem code -> status
}

func readOpenAPI() (openapiDoc, error) {
	b, err := files.ReadFile("openapi.yaml")
	if err != nil {
		return openapiDoc{}, err
	}
	var raw struct {
		Info  struct{ Description string } `yaml:"info"`
		Paths map[string]map[string]struct {
			Responses map[string]any `yaml:"responses"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return openapiDoc{}, err
	}
	doc := openapiDoc{ops: map[string][]string{}, table: map[string]int{}}
	for path, ops := range raw.Paths {
		for m, op := range ops {
			for st := range op.Responses {
				doc.ops[strings.ToUpper(m)+" "+path] = append(doc.ops[strings.ToUpper(m)+" "+path], st)
			}
		}
	}
	for _, line := range strings.Split(raw.Info.Description, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		st, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue
		}
		for _, c := range strings.Split(cells[2], ",") {
			doc.table[strings.TrimSpace(c)] = st
		}
	}
	return doc, nil
}

// served returns the problems the server's code can answer: the engine
// errors' table and every writeProblem with a literal status and code in
// the package's sources.
func served() (map[string]int, error) {
	out := map[string]int{}
	for _, p := range problems {
		out[p.code] = p.status
	}
	statuses := map[string]int{"StatusBadRequest": 400, "StatusUnauthorized": 401, "StatusForbidden": 403, "StatusNotFound": 404, "StatusMisdirectedRequest": 421,
		"StatusConflict": 409, "StatusUnprocessableEntity": 422, "StatusTooManyRequests": 429,
		"StatusInternalServerError": 500, "StatusServiceUnavailable": 503}
	re := regexp.MustCompile(`writeProblem\(w, http\.(\w+), "(\w+)"`)
	names, err := filepath.Glob("*.go")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		// staff.go, admin.go, kiosk.go and reports_page.go serve the
		// browser pages (/login, /counter, /admin, /kiosk, /reports), which
		// a browser uses with its cookie: not API operations, so their
		// problems (login_required, csrf, forbidden_counter, forbidden_role,
		// account_exists, kiosk_*, unknown_table) are not in openapi.yaml's
		// table; their own tests check them.
		if strings.HasSuffix(n, "_test.go") || n == "staff.go" || n == "admin.go" || n == "kiosk.go" || n == "reports_page.go" {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			st, ok := statuses[m[1]]
			if !ok {
				return nil, fmt.Errorf("%s: writeProblem with http.%s: add it to served's statuses", n, m[1])
			}
			out[m[2]] = st
		}
	}
	return out, nil
}

// checkAnswers walks openapi.yaml and the answers both ways:
//   - every problem the server's code can answer is in the error table,
//     with its status, and every code of the table is one of them;
//   - every answer a test got from a route is documented: its status
//     explicitly in the operation's responses (or, for an API call, one
//     any call may give), its problem code in the table with that status;
//   - every status an operation documents explicitly, and every code of
//     the table, was produced by some test.
func checkAnswers() []string {
	var out []string
	doc, err := readOpenAPI()
	if err != nil {
		return []string{err.Error()}
	}
	can, err := served()
	if err != nil {
		return []string{err.Error()}
	}
	for code, st := range can {
		if doc.table[code] != st {
			out = append(out, fmt.Sprintf("the server answers %d %s; the error table says %d", st, code, doc.table[code]))
		}
	}
	for code := range doc.table {
		if _, ok := can[code]; !ok {
			out = append(out, fmt.Sprintf("the error table lists %s, which the server never answers", code))
		}
	}
	produced, opSeen := map[string]bool{}, map[string]bool{}
	for _, a := range answered.all() {
		if a.code != "" {
			produced[a.code] = true
			if st, ok := doc.table[a.code]; !ok || st != a.status {
				out = append(out, fmt.Sprintf("%s answered %d %s; the error table says %d", cmp.Or(a.route, "writeError"), a.status, a.code, st))
			}
		}
		if a.route == "" {
			continue
		}
		route := strings.Replace(a.route, "{$}", "", 1)
		st := strconv.Itoa(a.status)
		opSeen[route+" "+st] = true
		documented := slices.Contains(doc.ops[route], st) ||
			(strings.Contains(route, " /api/") && anyAPICall(a.status, a.code) && slices.Contains(doc.ops[route], "default"))
		if !documented {
			out = append(out, fmt.Sprintf("%s answered %d (%s), which openapi.yaml does not list for it", route, a.status, cmp.Or(a.code, "no problem")))
		}
	}
	for op, sts := range doc.ops {
		for _, st := range sts {
			if st != "default" && !opSeen[op+" "+st] {
				out = append(out, fmt.Sprintf("openapi.yaml lists %s for %s, which no test made it answer", st, op))
			}
		}
	}
	for code := range doc.table {
		if !produced[code] {
			out = append(out, fmt.Sprintf("no test made the server answer %s", code))
		}
	}
	slices.Sort(out)
	return out
}

// TestProblemTable: every error of the engine's table is answered with its
// status and code, the 503s with Retry-After and without their cause; an
// unexpected error is 500 internal. (Those a test cannot cause end to end,
// a store timing out, say, are produced here for checkAnswers.)
func TestProblemTable(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, p := range append(problems, struct {
		err    error
		status int
		code   string
		title  string
	}{errors.New("something unexpected"), http.StatusInternalServerError, "internal", "internal error"}) {
		rec := httptest.NewRecorder()
		writeError(rec, log, fmt.Errorf("queue: doing something: %w", p.err))
		var got Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != p.status || got.Code != p.code || got.Type != ProblemType+p.code {
			t.Errorf("%v: %d %s, want %d %s", p.err, rec.Code, rec.Body, p.status, p.code)
		}
		if p.status == http.StatusServiceUnavailable && (rec.Header().Get("Retry-After") == "" || got.Detail != "") {
			t.Errorf("%v: Retry-After %q, detail %q; want one, and no cause", p.err, rec.Header().Get("Retry-After"), got.Detail)
		}
		answered.add(answer{status: rec.Code, code: got.Code})
	}
}

// TestOpenAPIWebhooks: openapi.yaml's webhooks are what a webhook is
// sent: the NotifyEvent schema has every key an event's body can carry
// (sqlstore.EventBody of an event with every field set) and no other, the
// Report schema every key of notify.ReportBody, and the headers are
// notify's.
func TestOpenAPIWebhooks(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
		Webhooks map[string]map[string]struct {
			Parameters []struct{ Name, In string } `yaml:"parameters"`
		} `yaml:"webhooks"`
	}
	if err := yaml.Unmarshal(embedded(t, "openapi.yaml"), &doc); err != nil {
		t.Fatal(err)
	}
	var e queue.Event
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Interface().(type) {
		case time.Time:
			f.Set(reflect.ValueOf(time.Now()))
		case time.Duration:
			f.SetInt(int64(time.Second))
		default:
			switch f.Kind() {
			case reflect.String:
				f.SetString("x")
			case reflect.Int, reflect.Int64:
				f.SetInt(1)
			default:
				t.Fatalf("queue.Event.%s: a %s; teach this test to set it", v.Type().Field(i).Name, f.Kind())
			}
		}
	}
	body, err := sqlstore.EventBody("id", &e)
	if err != nil {
		t.Fatal(err)
	}
	var sent map[string]any
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	var report []string
	rt := reflect.TypeFor[notify.ReportBody]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		report = append(report, name)
	}
	for schema, keys := range map[string][]string{"NotifyEvent": slices.Collect(maps.Keys(sent)), "Report": report} {
		documented := slices.Sorted(maps.Keys(doc.Components.Schemas[schema].Properties))
		if slices.Sort(keys); !slices.Equal(documented, keys) {
			t.Errorf("openapi.yaml's %s has %v; a webhook is sent %v", schema, documented, keys)
		}
	}
	for _, hook := range []string{"event", "report"} {
		var headers []string
		for _, p := range doc.Webhooks[hook]["post"].Parameters {
			if p.In == "header" {
				headers = append(headers, p.Name)
			}
		}
		if want := []string{notify.HeaderEventID, notify.HeaderEventType, notify.HeaderAttempt, notify.HeaderSignature}; !slices.Equal(headers, want) {
			t.Errorf("openapi.yaml's webhook %s has headers %v, want %v", hook, headers, want)
		}
	}
}

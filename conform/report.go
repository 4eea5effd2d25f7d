package conform

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Section is a numbered section of PROTOCOL.md; the checks are grouped by
// it (a test keeps the names in step with the document's headings).
type Section int

// The sections of PROTOCOL.md the checks belong to.
const (
	Frame     Section = 2
	Payload   Section = 3
	Session   Section = 4
	Requests  Section = 5
	Retries   Section = 6
	Heartbeat Section = 7
	Limits    Section = 8
	Errors    Section = 9
)

// sectionNames are the headings of PROTOCOL.md, without their numbers.
var sectionNames = map[Section]string{
	Frame:     "Frame",
	Payload:   "Payload: tagged fields",
	Session:   "Session",
	Requests:  "Requests and answers",
	Retries:   "Retries and idempotency",
	Heartbeat: "Heartbeats, events and resume",
	Limits:    "Limits",
	Errors:    "Errors",
}

// String is the heading as PROTOCOL.md writes it, e.g. "4. Session".
func (s Section) String() string { return fmt.Sprintf("%d. %s", int(s), sectionNames[s]) }

// Result is the outcome of one check.
type Result struct {
	Section Section
	Op      string // an openapi.yaml operation ("POST /api/v1/..."), for the API kit's checks (Section 0)
	Name    string // what is checked, e.g. "AUTH carries the HMAC of nonce || device id"
	Pass    bool
	Skipped bool   // not run: what it needs is not there (Detail says what)
	Detail  string // why it failed (the first failure), or why it was skipped
	runs    int
}

// Report is the list of checks of one run, in the order they were first
// made. A check made several times (on every frame, every request) fails
// if one of its runs failed, and keeps the first failure's detail.
type Report struct {
	Title   string
	results []*Result
	index   map[string]*Result
}

// NewReport returns an empty report titled title.
func NewReport(title string) *Report { return &Report{Title: title, index: map[string]*Result{}} }

// Check records one run of a check: failed when ok is false, detail
// saying why.
func (r *Report) Check(s Section, name string, ok bool, detail string) {
	r.check(s, "", name, ok, detail)
}

// CheckOp records one run of a check of an openapi.yaml operation op.
func (r *Report) CheckOp(op, name string, ok bool, detail string) { r.check(0, op, name, ok, detail) }

func (r *Report) check(s Section, op, name string, ok bool, detail string) {
	key := fmt.Sprintf("%d|%s|%s", s, op, name)
	res := r.index[key]
	if res == nil {
		res = &Result{Section: s, Op: op, Name: name, Pass: true}
		r.index[key] = res
		r.results = append(r.results, res)
	}
	res.runs++
	if !ok && res.Pass {
		res.Pass, res.Skipped, res.Detail = false, false, detail
	}
}

// Skip records that a check could not run, and why.
func (r *Report) Skip(s Section, name, why string) { r.skip(s, "", name, why) }

// SkipOp records that a check of operation op could not run, and why.
func (r *Report) SkipOp(op, name, why string) { r.skip(0, op, name, why) }

func (r *Report) skip(s Section, op, name, why string) {
	r.check(s, op, name, true, "")
	res := r.index[fmt.Sprintf("%d|%s|%s", s, op, name)]
	if res.runs == 1 {
		res.Skipped, res.Detail = true, why
	}
}

// Pass records a passed run of a check.
func (r *Report) Pass(s Section, name string) { r.Check(s, name, true, "") }

// Fail records a failed run of a check, with why.
func (r *Report) Fail(s Section, name, format string, args ...any) {
	r.Check(s, name, false, fmt.Sprintf(format, args...))
}

// Results returns the checks, by section (operations in the order first
// checked), in the order they were made within a section.
func (r *Report) Results() []Result {
	out := make([]Result, len(r.results))
	for i, res := range r.results {
		out[i] = *res
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Section < out[j].Section })
	return out
}

// Failed returns the checks that failed.
func (r *Report) Failed() []Result {
	var out []Result
	for _, res := range r.Results() {
		if !res.Pass {
			out = append(out, res)
		}
	}
	return out
}

// Failures is the names of the failed checks, one a line, for tests and
// logs.
func (r *Report) Failures() string {
	var b strings.Builder
	for _, res := range r.Failed() {
		if res.Op != "" {
			fmt.Fprintf(&b, "%s %s: %s\n", res.Op, res.Name, res.Detail)
			continue
		}
		fmt.Fprintf(&b, "§%d %s: %s\n", int(res.Section), res.Name, res.Detail)
	}
	return b.String()
}

// WriteTo writes the report as text: the checks under their section
// headings, PASS or FAIL each, then a total.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	if r.Title != "" {
		fmt.Fprintf(&b, "%s\n", r.Title)
	}
	last, skipped := "", 0
	res := r.Results()
	if r.byOp() {
		sort.SliceStable(res, func(i, j int) bool { return r.opOrder(res[i].Op) < r.opOrder(res[j].Op) })
	}
	for _, x := range res {
		head := x.Op
		if head == "" {
			head = x.Section.String()
		}
		if head != last {
			fmt.Fprintf(&b, "\n%s\n", head)
			last = head
		}
		mark := "PASS"
		switch {
		case !x.Pass:
			mark = "FAIL"
		case x.Skipped:
			mark = "SKIP"
			skipped++
		}
		fmt.Fprintf(&b, "  %s  %s", mark, x.Name)
		if x.Detail != "" {
			fmt.Fprintf(&b, ": %s", x.Detail)
		}
		b.WriteString("\n")
	}
	failed := len(r.Failed())
	fmt.Fprintf(&b, "\n%d checks: %d passed, %d failed, %d skipped\n", len(res), len(res)-failed-skipped, failed, skipped)
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// byOp reports whether the report's checks are by operation.
func (r *Report) byOp() bool { return len(r.results) > 0 && r.results[0].Op != "" }

// opOrder is the position of op's first check in the report.
func (r *Report) opOrder(op string) int {
	for i, res := range r.results {
		if res.Op == op {
			return i
		}
	}
	return len(r.results)
}

package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// decodeBookBodyJSON is how the booking body was decoded before
// readBookBody: the reference it must agree with.
func decodeBookBodyJSON(body io.Reader) (bookBody, error) {
	dec := json.NewDecoder(io.LimitReader(body, maxBody))
	dec.DisallowUnknownFields()
	var b bookBody
	err := dec.Decode(&b)
	return b, err
}

// bookBodies are bodies of every kind: plain ones (read without
// encoding/json) and the rest.
var bookBodies = []string{
	`{"slot":12,"patient":"p-1"}`, `{"patient":"scale-1-2","slot":123}`, `{"slot": 12, "patient": "p-3", "hold": true}`,
	" \t\n{ \"hold\" : false ,\r\n\"slot\":9223372036854775807,\"patient\":\"x\" }  ", `{}`, `{"slot":1,"patient":"a"} trailing`,
	`{"slot":1,"patient":"a"}{"slot":2}`, `{"slot":9223372036854775808,"patient":"a"}`, `{"slot":-1,"patient":"a"}`,
	`{"slot":0,"patient":"a"}`, `{"slot":01,"patient":"a"}`, `{"slot":1.0,"patient":"a"}`, `{"slot":1e3,"patient":"a"}`,
	`{"slot":"1","patient":"a"}`, `{"slot":null,"patient":"a"}`, `{"Slot":1,"patient":"a"}`, `{"SLOT":1,"PATIENT":"a"}`,
	`{"slot":1,"slot":2,"patient":"a"}`, `{"slot":1,"patient":"a","x":1}`, `{"slot":1,"patient":"a\"b"}`,
	`{"slot":1,"patient":"\u00e9"}`, `{"slot":1,"patient":"é"}`, "{\"slot\":1,\"patient\":\"\xff\"}", "{\"slot\":1,\"patient\":\"a\tb\"}",
	`{"slot":1,"patient":"a","hold":tru}`, `{"slot":1,"patient":"a","hold":truex}`, `{"slot":1,"patient":"a","hold":"true"}`,
	`{"slot":1,"patient":"a","hold":null}`, `{"slot":1,"patient":"a",}`, `{"slot":1 "patient":"a"}`, `{"slot":1,"patient":"a"`,
	`{"slot":1,"patient":`, `{"slot":12`, `{"slo`, `{`, ``, `   `, `[]`, `null`, `"x"`, `{"slot":1,"patient":"a"]`,
	`{"slot":1,,"patient":"a"}`, `{"slot"1}`, `{slot:1}`, `{"slot":1,"patient":"` + strings.Repeat("a", 5000) + `"}`,
	strings.Repeat(" ", 4090) + `{"slot":1}`, "\x00\xff", strings.Repeat("[", 5000),
}

// TestReadBookBody: a booking body is read as encoding/json reads it,
// value and error, whether it comes at once or a byte at a time; and the
// plain bodies clients send are read without it.
func TestReadBookBody(t *testing.T) {
	for _, body := range bookBodies {
		checkBookBody(t, body)
	}
	for _, body := range bookBodies[:4] {
		if _, st := parseBookBody([]byte(body)); st != bodyDone {
			t.Errorf("%q: state %d, want it read here (%d)", body, st, bodyDone)
		}
	}
}

// FuzzBookBody: readBookBody agrees with encoding/json on any body.
func FuzzBookBody(f *testing.F) {
	for _, body := range bookBodies {
		f.Add(body)
	}
	f.Fuzz(checkBookBody)
}

func checkBookBody(t *testing.T, body string) {
	readers := map[string]func() io.Reader{
		"at once":      func() io.Reader { return strings.NewReader(body) },
		"byte by byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) },
		"failing": func() io.Reader {
			return io.MultiReader(strings.NewReader(body[:len(body)/2]), iotest.ErrReader(errors.New("conn reset")))
		},
	}
	for name, r := range readers {
		want, wantErr := decodeBookBodyJSON(r())
		got, err := readBookBody(r())
		if got != want || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("%q (%s): got %+v, %v; want %+v, %v", body, name, got, err, want, wantErr)
		}
	}
}

// TestAppointmentAndProblemJSON: an appointment and a problem are written
// as encoding/json writes them, to the byte.
func TestAppointmentAndProblemJSON(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, loc)
	held := at.Add(10*time.Minute + 123456789)
	for _, a := range []Appointment{
		{ID: 1, Site: "main", Resource: "dr-0042", Slot: 77, Start: at, End: at.Add(15 * time.Minute), Patient: "p-1", Code: "K7Q2", Status: "booked", CreatedAt: at.UTC()},
		{ID: 2, Site: `s "<&>" 王`, Resource: "r\n", Slot: 1, Start: at.In(time.UTC), End: at, Patient: "é\u2028", Code: "", Status: "held",
			HeldUntil: &held, Ticket: "A001", CreatedAt: at.Add(time.Nanosecond)},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(a); err != nil {
			t.Fatal(err)
		}
		if got := appendAppointment(nil, &a); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appointment %d:\n got %s\nwant %s", a.ID, got, want.Bytes())
		}
	}
	for _, p := range []Problem{
		{Type: ProblemType + "slot_full", Title: "slot full", Status: 409, Detail: "slot 12 (known full)", Code: "slot_full"},
		{Type: ProblemType + "unauthorized", Title: "missing or unknown bearer token", Status: 401, Code: "unauthorized"},
		{Type: ProblemType + "bad_request", Title: "bad request", Status: 400, Code: "bad_request",
			Detail: `body: want {"slot": ID, "patient": REF, "hold": BOOL}: invalid character '<' in "é"`},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(p); err != nil {
			t.Fatal(err)
		}
		if got := appendProblem(nil, &p); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("problem %s:\n got %s\nwant %s", p.Code, got, want.Bytes())
		}
	}
}

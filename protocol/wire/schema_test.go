package wire

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// allSchemas returns the schema of every message and every record they
// carry, messages first in type order.
func allSchemas() []*schema {
	var out []*schema
	seen := map[*schema]bool{}
	var walk func(s *schema)
	walk = func(s *schema) {
		if seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
		for _, f := range s.fields {
			if f.rec != nil {
				walk(f.rec)
			}
		}
	}
	for _, t := range Types() {
		walk(schemas[t])
	}
	return out
}

// TestSchemaRejects shows that a faulty declaration cannot go unnoticed:
// the package's own declarations are built when it loads (a fault panics
// there, failing every test), and each fault below is refused by name. A
// tag written twice in one table is refused by the compiler (duplicate key
// in map literal).
func TestSchemaRejects(t *testing.T) {
	type pair struct{ A, B string }
	type plainInt struct{ A int }
	type number struct{ A uint32 }
	type unexported struct {
		A string
		//lint:ignore U1000 an unexported field is the case under test
		b string
	}
	type outer struct{ R []pair }
	rec := func(typ reflect.Type, fs fields) decl { return decl{name: typ.Name(), typ: typ, fields: fs} }
	pairT, outerT := reflect.TypeFor[pair](), reflect.TypeFor[outer]()
	tests := []struct {
		name  string
		decls []decl
		want  string
	}{
		{"field named twice", []decl{rec(pairT, fields{1: "A", 2: "A"})}, "pair.A declared twice (tags 1 and 2)"},
		{"no such field", []decl{rec(pairT, fields{1: "A", 2: "B", 3: "C"})}, "tag 3: no field C"},
		{"field without tag", []decl{rec(pairT, fields{1: "A"})}, "pair.B has no tag"},
		{"tag 0", []decl{rec(pairT, fields{0: "A", 1: "B"})}, "tag 0"},
		{"no name", []decl{rec(pairT, fields{1: "A", 2: " "})}, "want tag 1..255 and a field name"},
		{"Go int", []decl{rec(reflect.TypeFor[plainInt](), fields{1: "A"})}, "field of Go type int: no wire type"},
		{"id on a number", []decl{rec(reflect.TypeFor[number](), fields{1: "A id"})}, `rule "id" does not apply to uint32`},
		{"misspelt rule", []decl{rec(pairT, fields{1: "A requierd", 2: "B"})}, `rule "requierd"`},
		{"known on a string", []decl{rec(pairT, fields{1: "A known", 2: "B"})}, `rule "known" does not apply to string`},
		{"unexported", []decl{rec(reflect.TypeFor[unexported](), fields{1: "A", 2: "b"})}, "unexported field"},
		{"record not declared", []decl{rec(outerT, fields{1: "R"})}, "pair is not declared"},
		{"fault in a record", []decl{rec(outerT, fields{1: "R"}), rec(pairT, fields{1: "A"})}, "pair.B has no tag"},
		{"struct declared twice", []decl{rec(pairT, fields{1: "A", 2: "B"}), rec(pairT, fields{1: "A", 2: "B"})}, "declared twice"},
		{"type byte twice", []decl{
			{t: TypeAuth, name: "AUTH", typ: reflect.TypeFor[Auth](), fields: fields{1: "MAC"}},
			{t: TypeAuth, name: "AUTH2", typ: reflect.TypeFor[Challenge](), fields: fields{1: "Nonce"}},
		}, "type 0x03 declared twice (AUTH and AUTH2)"},
		{"struct of another type", []decl{{t: TypeHello, name: "HELLO", typ: reflect.TypeFor[Auth](), fields: fields{1: "MAC"}}}, "is not a Message of type 0x01"},
		{"not a message", []decl{{t: TypeHello, name: "HELLO", typ: pairT, fields: fields{1: "A", 2: "B"}}}, "is not a Message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := buildTest(tt.decls)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("build = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// The package's own declarations build (init did it too).
	if err := buildTest(decls); err != nil {
		t.Errorf("package declarations: %v", err)
	}
}

// buildTest builds the messages of ds, and the first declaration if it is a
// record.
func buildTest(ds []decl) error {
	if _, err := buildAll(ds); err != nil {
		return err
	}
	if ds[0].t != 0 {
		return nil
	}
	b := builder{decls: map[reflect.Type]*decl{}, built: map[reflect.Type]*schema{}}
	for i := range ds {
		b.decls[ds[i].typ] = &ds[i]
	}
	_, err := b.schema(ds[0].typ)
	return err
}

func TestSchemas(t *testing.T) {
	for _, s := range allSchemas() {
		tags := map[uint8]string{}
		for i, f := range s.fields {
			if prev, ok := tags[f.tag]; ok {
				t.Errorf("%s: tag %d declared twice (%s, %s)", s.name, f.tag, prev, f.name)
			}
			tags[f.tag] = f.name
			if i > 0 && s.fields[i-1].tag >= f.tag {
				t.Errorf("%s.%s: tag %d not after %d", s.name, f.name, f.tag, s.fields[i-1].tag)
			}
			if int(s.byTag[f.tag]) != i+1 {
				t.Errorf("%s.%s: tag index %d, want %d", s.name, f.name, s.byTag[f.tag], i+1)
			}
		}
	}
	// Every request but REPRINT (which changes no state) has the
	// idempotency key at tag 1, and all of them the site at tag 10
	// (PROTOCOL.md section 11: one C routine builds them all).
	for _, ty := range Types() {
		if !ty.IsRequest() {
			continue
		}
		s := schemas[ty]
		if i := s.byTag[1]; ty.IsMutating() != (i != 0 && s.fields[i-1].name == "IdemKey") {
			t.Errorf("%s: tag 1 is the idempotency key = %v, mutating = %v", ty, i != 0, ty.IsMutating())
		}
		if i := s.byTag[10]; i == 0 || s.fields[i-1].name != "Site" {
			t.Errorf("%s: tag 10 is not Site", ty)
		}
	}
}

// specTable is one "### 0x01 HELLO" or "### Record ServiceInfo" section of
// PROTOCOL.md: its rows "tag | field | type (wire type)".
type specTable struct {
	name string
	rows [][3]string
}

var specHeading = regexp.MustCompile(`^### (?:0x([0-9A-F]{2}) ([A-Z_]+)|Record (\w+))$`)

// readSpecTables parses the field tables of section 11 of PROTOCOL.md.
func readSpecTables(t *testing.T) map[string]*specTable {
	t.Helper()
	f, err := os.Open(docPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables := map[string]*specTable{}
	var cur *specTable
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			cur = nil
			if m := specHeading.FindStringSubmatch(line); m != nil {
				cur = &specTable{name: m[2] + m[3]}
				tables[cur.name] = cur
			}
			continue
		}
		cells := strings.Split(line, "|")
		if cur == nil || len(cells) < 5 {
			continue
		}
		tag := strings.TrimSpace(cells[1])
		if _, err := strconv.Atoi(tag); err != nil {
			continue // the header and the --- row
		}
		cur.rows = append(cur.rows, [3]string{tag, strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tables
}

// TestSpecTables checks that every field table of PROTOCOL.md section 11
// states the tags, names and types the structs declare, row for row in tag
// order, and that the document has a table for every message and record.
func TestSpecTables(t *testing.T) {
	tables := readSpecTables(t)
	for _, s := range allSchemas() {
		tab, ok := tables[s.name]
		if !ok {
			t.Errorf("PROTOCOL.md has no field table for %s", s.name)
			continue
		}
		delete(tables, s.name)
		var want [][3]string
		for _, f := range s.fields {
			want = append(want, [3]string{strconv.Itoa(int(f.tag)), f.name, f.specType()})
		}
		if !slices.Equal(tab.rows, want) {
			t.Errorf("PROTOCOL.md table of %s:\n%s\ndeclared:\n%s", s.name, specRows(tab.rows), specRows(want))
		}
	}
	for name := range tables {
		t.Errorf("PROTOCOL.md has a field table for %s, which no struct declares", name)
	}
}

func specRows(rows [][3]string) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r[0], r[1], r[2])
	}
	return b.String()
}

// markFields records, for every field set in v (whose schema is s), the
// message (or record) and field, descending into records.
func markFields(seen map[string]bool, s *schema, v reflect.Value) {
	for i := range s.fields {
		f := &s.fields[i]
		fv := v.Field(f.index)
		if empty(fv) {
			continue
		}
		seen[s.name+"."+f.name] = true
		if f.rec == nil {
			continue
		}
		if !f.repeated {
			markFields(seen, f.rec, fv)
			continue
		}
		for j := range fv.Len() {
			markFields(seen, f.rec, fv.Index(j))
		}
	}
}

// TestVectorsCoverFields fails for a field of a message (or record) that
// no canonical vector of it sets: every field a firmware author may meet
// has its bytes in PROTOCOL.md, in the message it meets it in (RECALL's
// Site, not only COMPLETE's, although they share a declaration).
func TestVectorsCoverFields(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range vectors {
		markFields(seen, schemaOf(v.msg), reflect.ValueOf(v.msg).Elem())
	}
	for _, s := range allSchemas() {
		for i := range s.fields {
			if f := &s.fields[i]; !seen[s.name+"."+f.name] {
				t.Errorf("%s.%s (tag %d): no vector sets it", s.name, f.name, f.tag)
			}
		}
	}
}

// TestDecodeRequired: a frame without a field its message requires is
// malformed when decoded, as section 5 of PROTOCOL.md says (ERROR 0x04),
// not refused later by another rule (issue 14, item 4).
func TestDecodeRequired(t *testing.T) {
	tests := []struct {
		name string
		m    Message
		tag  uint8
	}{
		{"hello without device id", &Hello{Role: RoleKiosk, ProtocolVersion: 1}, 1},
		{"hello without role", &Hello{DeviceID: "kiosk-1", ProtocolVersion: 1}, 2},
		{"hello with role 9", &Hello{DeviceID: "kiosk-1", Role: 9}, 2},
		{"auth mac of 31 bytes", &Auth{MAC: make([]byte, 31)}, 1},
		{"challenge without nonce", &Challenge{}, 1},
		{"take ticket without service", &TakeTicket{IdemKey: "k1-0003"}, 4},
		{"take ticket key of 65 bytes", &TakeTicket{IdemKey: strings.Repeat("k", 65), Service: "A"}, 1},
		{"call number without number", &CallNumber{Counter: 5}, 3},
		{"transfer nowhere", &Transfer{Counter: 5}, 5},
		{"subscribe service of 65 bytes", &Subscribe{Services: []string{"A", strings.Repeat("B", 65)}}, 4},
		{"error code 0", &ErrorMsg{Msg: "x"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Encoding does not validate: a test (or a broken device) can
			// send what a receiver must refuse.
			b, err := EncodeMessage(nil, 1, 0, tt.m)
			if err != nil {
				t.Fatal(err)
			}
			f, _, err := DecodeFrame(b)
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeMessage(f)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Tag != tt.tag || fe.Type != tt.m.Type() {
				t.Fatalf("DecodeMessage = %v, want a FieldError on %s tag %d", err, tt.m.Type(), tt.tag)
			}
			if got := StatusOf(err); got.Code != ErrBadPayload.Code {
				t.Errorf("StatusOf = %v, want 0x04", got)
			}
		})
	}
}

// sample returns a message of type ty with every declared field set, from
// its declaration alone: integers at their largest (enumerations that must
// be known at 1), strings and bytes short (nonces exactly NonceSize),
// repeated fields and records with two elements. The fuzz targets start
// from these too.
func sample(ty MsgType) Message {
	m, err := New(ty)
	if err != nil {
		panic(err)
	}
	fill(schemas[ty], reflect.ValueOf(m).Elem())
	return m
}

func fill(s *schema, v reflect.Value) {
	for i := range s.fields {
		f := &s.fields[i]
		fv := v.Field(f.index)
		if !f.repeated {
			fillOne(f, fv, 1)
			continue
		}
		fv.Set(reflect.MakeSlice(fv.Type(), 2, 2))
		for j := range 2 {
			fillOne(f, fv.Index(j), j+1)
		}
	}
}

func fillOne(f *fieldDef, v reflect.Value, n int) {
	switch f.kind {
	case kindUint:
		v.SetUint(math.MaxUint64 >> (64 - f.bits))
		if f.known {
			v.SetUint(1)
		}
	case kindBool:
		v.SetBool(true)
	case kindInt:
		v.SetInt(-1 << 62)
	case kindString:
		v.SetString(fmt.Sprintf("%s-%d", f.name, n))
	case kindBytes:
		v.SetBytes(make([]byte, max(f.exactLen, n)))
	case kindRecord:
		fill(f.rec, v)
	}
}

// TestSampleRoundTrip encodes and decodes a message of every type with every
// field set: each declaration works both ways and passes its own rules.
func TestSampleRoundTrip(t *testing.T) {
	for _, ty := range Types() {
		m := sample(ty)
		b, err := EncodeMessage(nil, 1, 0, m)
		if err != nil {
			t.Fatalf("%s: %v", ty, err)
		}
		f, _, err := DecodeFrame(b)
		if err != nil {
			t.Fatalf("%s: %v", ty, err)
		}
		got, err := DecodeMessage(f)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("%s: round trip = %#v, %v; want %#v", ty, got, err, m)
		}
	}
}

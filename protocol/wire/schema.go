package wire

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A message is declared once, by its struct and, just below it, a table
// from tag number to field name and rules:
//
//	var _ = declare[Hello](TypeHello, "HELLO", fields{
//		1: "DeviceID id required",
//		2: "Role required known",
//		...
//	})
//
// A tag written twice in a table does not compile (a duplicate map key);
// a struct field left out of its table, or named twice, stops the package
// from loading. The field's Go type gives the wire type and the width a
// sender writes:
//
//	uint8 .. uint64 and types defined on them (Role, Actions, ...)   uint, 1..8 bytes
//	bool                                                             uint, 1 byte, 0 or 1
//	int64                                                            int, 8 bytes
//	string, []byte                                                   string, bytes
//	a struct declared with declareRecord                             record
//	a slice of any of these                                          repeated
//
// Rules after the name, checked by Validate:
//
//	required    the field must not be zero, false or empty
//	required=G  at least one field of group G must be set
//	id          at most MaxIDLen bytes (every element, when repeated)
//	nonce       exactly NonceSize bytes
//	known       an enumeration value this package names (see Role)
//
// Senders write fields in ascending tag order (PROTOCOL.md section 3).
// From these declarations come AppendBinary, Decode, Validate, New, the
// check of PROTOCOL.md's field tables, the field coverage of the test
// vectors and the fuzz seeds.

// fields is the declaration of a struct's fields: tag number to
// "FieldName rule ...".
type fields map[uint8]string

// decl is one declared struct: a message (t != 0) or a record.
type decl struct {
	t      MsgType
	name   string
	typ    reflect.Type
	fields fields
}

// decls collects the declarations as the package's variables are
// initialised; init (types.go) builds the schemas from them.
var decls []decl

// declare declares message M: its type byte, its specification name and
// its fields.
func declare[M any](t MsgType, name string, fs fields) struct{} {
	decls = append(decls, decl{t: t, name: name, typ: reflect.TypeFor[M](), fields: fs})
	return struct{}{}
}

// declareRecord declares record R, which messages carry in record fields.
func declareRecord[R any](fs fields) struct{} {
	typ := reflect.TypeFor[R]()
	decls = append(decls, decl{name: typ.Name(), typ: typ, fields: fs})
	return struct{}{}
}

// MaxIDLen is the longest device id, idempotency key, site, service, ticket
// number or printer id, in bytes (rule id).
const MaxIDLen = 64

// kind is how a field's Go type maps onto the wire.
type kind uint8

const (
	kindUint kind = iota
	kindBool
	kindInt
	kindString
	kindBytes
	kindRecord
)

// wireTypes is the FieldType each kind is sent as.
var wireTypes = [...]FieldType{
	kindUint: FieldUint, kindBool: FieldUint, kindInt: FieldInt,
	kindString: FieldString, kindBytes: FieldBytes, kindRecord: FieldRecord,
}

// fieldDef is one declared field of a message or record.
type fieldDef struct {
	tag      uint8
	name     string
	index    int          // in the struct
	kind     kind         // of the element, when repeated
	repeated bool         // a slice: one field per element
	bits     int          // kindUint and kindInt: size of the Go type
	typ      reflect.Type // the element's Go type
	rec      *schema      // kindRecord
	required bool
	group    string // required=G
	maxLen   int    // id: 0 means no limit
	exactLen int    // nonce: 0 means any
	known    bool
}

// schema is the declaration of one message or record.
type schema struct {
	name   string // HELLO, or ServiceInfo for a record
	t      MsgType
	typ    reflect.Type
	ptr    reflect.Type // *typ, the Message
	fields []fieldDef
	byTag  [256]uint8 // index+1 into fields; 0: unknown tag, skipped
	groups []group
}

// group is a set of fields of which at least one must be set (rule
// required=G).
type group struct {
	name    string
	tag     uint8  // of its first field, for the error
	names   string // "ToService or ToCounter"
	members []int  // struct field indexes
}

func (g *group) satisfied(v reflect.Value) bool {
	for _, i := range g.members {
		if !empty(v.Field(i)) {
			return true
		}
	}
	return false
}

// addToGroup records that f belongs to its group.
func (s *schema) addToGroup(f *fieldDef) {
	for i := range s.groups {
		if g := &s.groups[i]; g.name == f.group {
			g.names += " or " + f.name
			g.members = append(g.members, f.index)
			return
		}
	}
	s.groups = append(s.groups, group{name: f.group, tag: f.tag, names: f.name, members: []int{f.index}})
}

// knower is implemented by enumerations whose values Validate can check
// (rule known).
type knower interface{ known() bool }

var (
	bytesType  = reflect.TypeFor[[]byte]()
	knowerType = reflect.TypeFor[knower]()
)

// builder turns declarations into schemas; each record type gets one
// schema, shared by the messages that carry it.
type builder struct {
	decls map[reflect.Type]*decl
	built map[reflect.Type]*schema
}

// buildAll builds the schema of every declared message, by type byte.
func buildAll(ds []decl) (out [256]*schema, err error) {
	b := builder{decls: map[reflect.Type]*decl{}, built: map[reflect.Type]*schema{}}
	for i := range ds {
		d := &ds[i]
		if _, dup := b.decls[d.typ]; dup {
			return out, fmt.Errorf("wire: %s declared twice", d.typ)
		}
		b.decls[d.typ] = d
	}
	for i := range ds {
		d := &ds[i]
		if d.t == 0 {
			continue
		}
		if out[d.t] != nil {
			return out, fmt.Errorf("wire: type 0x%02x declared twice (%s and %s)", uint8(d.t), out[d.t].name, d.name)
		}
		s, err := b.schema(d.typ)
		if err != nil {
			return out, err
		}
		if m, ok := reflect.New(d.typ).Interface().(Message); !ok || m.Type() != d.t {
			return out, fmt.Errorf("wire: %s: %s is not a Message of type 0x%02x (see methods.go)", d.name, d.typ, uint8(d.t))
		}
		out[d.t] = s
	}
	return out, nil
}

// schema returns the schema of the declared struct typ.
func (b *builder) schema(typ reflect.Type) (*schema, error) {
	if s, ok := b.built[typ]; ok {
		return s, nil
	}
	d, ok := b.decls[typ]
	if !ok {
		return nil, fmt.Errorf("wire: %s is not declared (declare or declareRecord)", typ)
	}
	s, err := b.build(d)
	if err != nil {
		return nil, err
	}
	b.built[typ] = s
	return s, nil
}

// build reads declaration d against its struct.
func (b *builder) build(d *decl) (*schema, error) {
	s := &schema{name: d.name, t: d.t, typ: d.typ, ptr: reflect.PointerTo(d.typ)}
	if d.typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("wire: %s: %s is not a struct", d.name, d.typ)
	}
	tags := make(map[string]uint8, len(d.fields))
	for _, tag := range slices.Sorted(maps.Keys(d.fields)) {
		spec := strings.Fields(d.fields[tag])
		if tag == 0 || len(spec) == 0 {
			return nil, fmt.Errorf("wire: %s: tag %d %q: want tag 1..255 and a field name", d.name, tag, d.fields[tag])
		}
		if prev, dup := tags[spec[0]]; dup {
			return nil, fmt.Errorf("wire: %s.%s declared twice (tags %d and %d)", d.name, spec[0], prev, tag)
		}
		tags[spec[0]] = tag
		sf, ok := d.typ.FieldByName(spec[0])
		if !ok || len(sf.Index) != 1 {
			return nil, fmt.Errorf("wire: %s: tag %d: no field %s", d.name, tag, spec[0])
		}
		f, err := b.field(sf, tag, spec[1:])
		if err != nil {
			return nil, fmt.Errorf("wire: %s.%s: %w", d.name, sf.Name, err)
		}
		s.add(f)
	}
	for i := range d.typ.NumField() {
		if name := d.typ.Field(i).Name; tags[name] == 0 {
			return nil, fmt.Errorf("wire: %s.%s has no tag", d.name, name)
		}
	}
	return s, nil
}

// add appends field f, whose tag is above those already added.
func (s *schema) add(f fieldDef) {
	s.fields = append(s.fields, f)
	s.byTag[f.tag] = uint8(len(s.fields))
	if f.group != "" {
		s.addToGroup(&s.fields[len(s.fields)-1])
	}
}

// field reads one struct field: its Go type and its rules.
func (b *builder) field(sf reflect.StructField, tag uint8, rules []string) (fieldDef, error) {
	f := fieldDef{tag: tag, name: sf.Name, index: sf.Index[0], typ: sf.Type}
	if !sf.IsExported() {
		return f, fmt.Errorf("unexported field")
	}
	if f.typ.Kind() == reflect.Slice && f.typ != bytesType {
		f.repeated, f.typ = true, f.typ.Elem()
	}
	if err := f.setKind(b); err != nil {
		return f, err
	}
	for _, r := range rules {
		if err := f.setRule(r); err != nil {
			return f, err
		}
	}
	return f, nil
}

func (f *fieldDef) setKind(b *builder) error {
	t := f.typ
	switch {
	case t == bytesType:
		f.kind = kindBytes
	case t.Kind() >= reflect.Uint8 && t.Kind() <= reflect.Uint64:
		f.kind, f.bits = kindUint, t.Bits()
	case t.Kind() == reflect.Bool:
		f.kind = kindBool
	case t.Kind() == reflect.Int64:
		f.kind, f.bits = kindInt, 64
	case t.Kind() == reflect.String:
		f.kind = kindString
	case t.Kind() == reflect.Struct:
		rec, err := b.schema(t)
		if err != nil {
			return err
		}
		f.kind, f.rec = kindRecord, rec
	default:
		return fmt.Errorf("field of Go type %s: no wire type", t)
	}
	return nil
}

func (f *fieldDef) setRule(o string) error {
	name, arg, _ := strings.Cut(o, "=")
	text := f.kind == kindString || f.kind == kindBytes
	switch {
	case name == "required":
		f.required, f.group = arg == "", arg
	case name == "id" && text:
		f.maxLen = MaxIDLen
	case name == "nonce" && f.kind == kindBytes && !f.repeated:
		f.exactLen = NonceSize
	case name == "known" && f.typ.Implements(knowerType):
		f.known = true
	default:
		return fmt.Errorf("rule %q does not apply to %s", o, f.typ)
	}
	return nil
}

// specType is the field's "type (wire type)" column in PROTOCOL.md, e.g.
// "u8 Role (0)", "repeated string (3)", "repeated record ServiceInfo (4)".
func (f *fieldDef) specType() string {
	var s string
	switch f.kind {
	case kindUint:
		s = "u" + strconv.Itoa(f.bits)
		if f.typ.PkgPath() != "" {
			s += " " + f.typ.Name()
		}
	case kindBool:
		s = "bool"
	case kindInt:
		s = "i" + strconv.Itoa(f.bits)
	case kindString:
		s = "string"
	case kindBytes:
		s = "bytes"
	case kindRecord:
		s = "record " + f.rec.name
	}
	if f.repeated {
		s = "repeated " + s
	}
	return fmt.Sprintf("%s (%d)", s, wireTypes[f.kind])
}

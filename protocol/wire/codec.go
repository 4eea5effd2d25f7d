package wire

import (
	"fmt"
	"reflect"
)

// The codec proper: AppendBinary, Decode and Validate of every message walk
// its schema (schema.go), so a field's tag, wire type, width and rules are
// written once, in its declaration.

// appendMessage appends the payload of m.
func appendMessage(dst []byte, m Message) ([]byte, error) {
	e := encoder{b: dst}
	schemaOf(m).append(&e, reflect.ValueOf(m).Elem())
	return e.b, e.err
}

// decodeMessage replaces m with the payload in src, then validates it: a
// payload that breaks a rule of its declaration is malformed (ERROR 0x04),
// whether the rule is a wire type or a required field (PROTOCOL.md
// section 5).
func decodeMessage(src []byte, m Message) error {
	s := schemaOf(m)
	v := reflect.ValueOf(m).Elem()
	v.SetZero()
	d := decoder{b: src, t: s.t}
	s.decode(&d, v)
	if d.err != nil {
		return d.err
	}
	return s.validate(s.t, v)
}

// Validate checks the rules a message's declaration states beyond its wire
// types: required fields, the length limits of PROTOCOL.md (section 8) and
// known enumeration values. Decode applies it to what it decodes; a sender
// may call it before sending. A failure is a *FieldError, so it matches
// ErrMalformed and StatusOf maps it to ErrBadPayload.
// A message type of another package has no declaration here and passes.
func Validate(m Message) error {
	s, ok := lookup(m)
	if !ok {
		return nil
	}
	return s.validate(s.t, reflect.ValueOf(m).Elem())
}

// lookup returns the schema of m, if m is a message of this package.
func lookup(m Message) (*schema, bool) {
	s := schemas[m.Type()]
	return s, s != nil && reflect.TypeOf(m) == s.ptr
}

// schemaOf returns the schema of m, a message of this package (the
// methods in methods.go are its only callers).
func schemaOf(m Message) *schema {
	s, ok := lookup(m)
	if !ok {
		panic(fmt.Sprintf("wire: %T is not the message of type %s", m, m.Type()))
	}
	return s
}

func (s *schema) append(e *encoder, v reflect.Value) {
	for i := range s.fields {
		f := &s.fields[i]
		fv := v.Field(f.index)
		if !f.repeated {
			// Absent means zero (PROTOCOL.md section 3, rule 2).
			if !empty(fv) {
				f.append(e, fv)
			}
			continue
		}
		// Elements of a repeated field are always sent.
		for j := range fv.Len() {
			f.append(e, fv.Index(j))
		}
	}
}

func (f *fieldDef) append(e *encoder, v reflect.Value) {
	switch f.kind {
	case kindUint:
		e.uint(f.tag, v.Uint(), f.bits/8)
	case kindBool:
		var b uint64
		if v.Bool() {
			b = 1
		}
		e.uint(f.tag, b, 1)
	case kindInt:
		e.int(f.tag, v.Int())
	case kindString:
		appendRaw(e, f.tag, FieldString, v.String())
	case kindBytes:
		appendRaw(e, f.tag, FieldBytes, v.Bytes())
	case kindRecord:
		start := e.begin(f.tag)
		f.rec.append(e, v)
		e.end(start)
	}
}

// decode reads the fields of d into v, skipping unknown tags. A repeated
// field grows by one element per field; any other field takes the last
// value sent.
func (s *schema) decode(d *decoder, v reflect.Value) {
	for d.next() {
		i := s.byTag[d.tag]
		if i == 0 {
			continue
		}
		f := &s.fields[i-1]
		fv := v.Field(f.index)
		if f.repeated {
			n := fv.Len()
			fv.Grow(1)
			fv.SetLen(n + 1)
			fv = fv.Index(n)
		}
		f.decode(d, fv)
	}
}

func (f *fieldDef) decode(d *decoder, v reflect.Value) {
	switch f.kind {
	case kindUint:
		v.SetUint(d.uint(f.bits))
	case kindBool:
		v.SetBool(d.bool())
	case kindInt:
		v.SetInt(d.int())
	case kindString:
		v.SetString(d.str())
	case kindBytes:
		v.SetBytes(d.bytes())
	case kindRecord:
		v.SetZero()
		d.record(func(sub *decoder) { f.rec.decode(sub, v) })
	}
}

// validate checks the rules of s on v; t is the message being checked,
// for the error.
func (s *schema) validate(t MsgType, v reflect.Value) error {
	for i := range s.fields {
		f := &s.fields[i]
		fv := v.Field(f.index)
		if f.required && empty(fv) {
			return &FieldError{Type: t, Tag: f.tag, Reason: "required"}
		}
		if !f.repeated {
			if err := f.check(t, fv); err != nil {
				return err
			}
			continue
		}
		for j := range fv.Len() {
			if err := f.check(t, fv.Index(j)); err != nil {
				return err
			}
		}
	}
	for _, g := range s.groups {
		if !g.satisfied(v) {
			return &FieldError{Type: t, Tag: g.tag, Reason: g.names + " required"}
		}
	}
	return nil
}

// check applies a field's rules to one value (one element, when repeated).
func (f *fieldDef) check(t MsgType, v reflect.Value) error {
	why := ""
	switch {
	case f.maxLen > 0 && v.Len() > f.maxLen:
		why = fmt.Sprintf("%d bytes, at most %d", v.Len(), f.maxLen)
	case f.exactLen > 0 && v.Len() != f.exactLen:
		why = fmt.Sprintf("%d bytes, want %d", v.Len(), f.exactLen)
	case f.known && !v.Interface().(knower).known():
		why = fmt.Sprintf("unknown %s %d", f.typ.Name(), v.Uint())
	case f.kind == kindRecord:
		return f.rec.validate(t, v)
	}
	if why != "" {
		return &FieldError{Type: t, Tag: f.tag, Reason: why}
	}
	return nil
}

// empty reports whether a field is absent on the wire: zero, false, or a
// string or slice of length 0.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String, reflect.Slice:
		return v.Len() == 0
	}
	return v.IsZero()
}

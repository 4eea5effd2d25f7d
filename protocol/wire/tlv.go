package wire

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// FieldType is the second byte of a field header (the "wire type" of
// PROTOCOL.md): how its value is encoded.
type FieldType uint8

// Field types. A receiver skips a field whose tag it does not know, whatever
// its wire type, using the length in the field header.
const (
	// FieldUint is an unsigned big-endian integer of 0 to 8 bytes; booleans
	// are a 1-byte FieldUint, 0 or 1.
	FieldUint FieldType = 0
	// FieldInt is a signed two's-complement big-endian integer of 0 to 8 bytes.
	FieldInt FieldType = 1
	// FieldBytes is raw bytes.
	FieldBytes FieldType = 2
	// FieldString is UTF-8 text.
	FieldString FieldType = 3
	// FieldRecord is a nested sequence of fields.
	FieldRecord FieldType = 4
)

// FieldHeaderSize is the size of a field header: tag (1), wire type (1),
// value length (2, big-endian).
const FieldHeaderSize = 4

// MaxFieldLen is the largest value length a field header can declare.
const MaxFieldLen = 0xFFFF

// encoder appends fields to b; the schema decides which fields to write
// (zero values are omitted, elements of repeated fields are not). The first
// error sticks.
type encoder struct {
	b   []byte
	err error
}

func (e *encoder) header(tag uint8, wt FieldType, n int) {
	if n > MaxFieldLen {
		if e.err == nil {
			e.err = fmt.Errorf("wire: encode field %d: %d bytes: %w", tag, n, ErrFrameTooLarge)
		}
		n = 0
	}
	e.b = append(e.b, tag, byte(wt), byte(n>>8), byte(n))
}

// uint writes v in exactly width bytes.
func (e *encoder) uint(tag uint8, v uint64, width int) {
	e.header(tag, FieldUint, width)
	for i := width - 1; i >= 0; i-- {
		e.b = append(e.b, byte(v>>(8*i)))
	}
}

// int writes v in 8 bytes.
func (e *encoder) int(tag uint8, v int64) {
	e.header(tag, FieldInt, 8)
	e.b = binary.BigEndian.AppendUint64(e.b, uint64(v))
}

// appendRaw writes a string or bytes field.
func appendRaw[T string | []byte](e *encoder, tag uint8, wt FieldType, s T) {
	e.header(tag, wt, len(s))
	if len(s) <= MaxFieldLen {
		e.b = append(e.b, s...)
	}
}

// begin starts a record field and returns where its header is; end patches
// the length once the record's fields are appended.
func (e *encoder) begin(tag uint8) int {
	start := len(e.b)
	e.b = append(e.b, tag, byte(FieldRecord), 0, 0)
	return start
}

func (e *encoder) end(start int) {
	n := len(e.b) - start - FieldHeaderSize
	if n > MaxFieldLen {
		if e.err == nil {
			e.err = fmt.Errorf("wire: encode record %d: %d bytes: %w", e.b[start], n, ErrFrameTooLarge)
		}
		return
	}
	binary.BigEndian.PutUint16(e.b[start+2:], uint16(n))
}

// decoder walks the fields of a payload. next advances to the following
// field; the typed getters check the wire type and bounds of the current
// field and record the first error, which ends the walk.
type decoder struct {
	b   []byte
	t   MsgType
	err error

	tag uint8
	wt  FieldType
	val []byte
}

func (d *decoder) next() bool {
	if d.err != nil || len(d.b) == 0 {
		return false
	}
	if len(d.b) < FieldHeaderSize {
		d.fail("field header cut short")
		return false
	}
	tag, wt := d.b[0], FieldType(d.b[1])
	n := int(binary.BigEndian.Uint16(d.b[2:4]))
	if tag == 0 {
		d.fail("tag 0")
		return false
	}
	if n > len(d.b)-FieldHeaderSize {
		d.tag = tag
		d.fail(fmt.Sprintf("length %d beyond payload", n))
		return false
	}
	d.tag, d.wt, d.val = tag, wt, d.b[FieldHeaderSize:FieldHeaderSize+n]
	d.b = d.b[FieldHeaderSize+n:]
	return true
}

func (d *decoder) fail(why string) {
	if d.err == nil {
		d.err = &FieldError{Type: d.t, Tag: d.tag, Reason: why}
	}
}

func (d *decoder) want(wt FieldType) bool {
	if d.wt != wt {
		d.fail(fmt.Sprintf("wire type %d, want %d", d.wt, wt))
		return false
	}
	return true
}

// uint returns the current field as an unsigned integer of at most bits.
func (d *decoder) uint(bits int) uint64 {
	if !d.want(FieldUint) {
		return 0
	}
	if len(d.val) > 8 {
		d.fail("integer longer than 8 bytes")
		return 0
	}
	var v uint64
	for _, c := range d.val {
		v = v<<8 | uint64(c)
	}
	if bits < 64 && v>>bits != 0 {
		d.fail(fmt.Sprintf("value %d does not fit %d bits", v, bits))
		return 0
	}
	return v
}

func (d *decoder) int() int64 {
	if !d.want(FieldInt) {
		return 0
	}
	if len(d.val) > 8 {
		d.fail("integer longer than 8 bytes")
		return 0
	}
	if len(d.val) == 0 {
		return 0
	}
	v := int64(int8(d.val[0])) // sign-extend
	for _, c := range d.val[1:] {
		v = v<<8 | int64(c)
	}
	return v
}

// bool returns the current field as a boolean: a uint that is 0 or 1
// (PROTOCOL.md section 3); any other value does not fit the field.
func (d *decoder) bool() bool {
	v := d.uint(64)
	if v > 1 {
		d.fail(fmt.Sprintf("boolean %d, want 0 or 1", v))
	}
	return v == 1
}

func (d *decoder) str() string {
	if !d.want(FieldString) {
		return ""
	}
	if !utf8.Valid(d.val) {
		d.fail("string is not UTF-8")
		return ""
	}
	return string(d.val)
}

// bytes returns a copy of the current field: the payload buffer may be
// reused by the caller after Decode.
func (d *decoder) bytes() []byte {
	if !d.want(FieldBytes) || len(d.val) == 0 {
		return nil
	}
	return append([]byte(nil), d.val...)
}

// record decodes the current field as a nested record with fn.
func (d *decoder) record(fn func(*decoder)) {
	if !d.want(FieldRecord) {
		return
	}
	sub := decoder{b: d.val, t: d.t}
	fn(&sub)
	if sub.err != nil && d.err == nil {
		d.err = sub.err
	}
}

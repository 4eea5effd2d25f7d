package sqlstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestResultKeysFixed: the names are part of the stored format (see
// resultKeys): these first ones never move; new ones go after them.
func TestResultKeysFixed(t *testing.T) {
	const shipped = 43
	sum := sha256.Sum256([]byte(strings.Join(resultKeys[:shipped], ",")))
	if got, want := hex.EncodeToString(sum[:]), "49a764706efc848c5ec8764081d9157cec35bfc1fb2fd1d71d3847f1ab6b4adb"; got != want {
		t.Errorf("resultKeys digest %s, want %s: rows stored with them would not read back", got, want)
	}
	if len(resultKeys) > tokenShort+256 {
		t.Errorf("%d result keys, at most %d fit", len(resultKeys), tokenShort+256)
	}
}

// TestPackResult: what is packed unpacks to the same bytes; bytes of an
// older row (not packed) read as they are.
func TestPackResult(t *testing.T) {
	for _, b := range [][]byte{nil, {}, []byte(`{"ID":1}`), {0, 1, 2, 0xff}, {1, 2}, []byte(`{"a":"\u0001"}`), []byte(`"Site"`),
		[]byte(`{"Site":"a\"b,\"ID\":","OnTime":true,"X":"0001-01-01T00:00:00Z","IssuedAt":"0001-01-01T00:00:00Z","Ticket":{"ID":2},"Site"}`),
		[]byte(`{"unterminated`), []byte(`{"ID"`)} {
		got, err := unpackResult(packResult(b))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("unpack(pack(%q)) = %q, %v", b, got, err)
		}
	}
	old := []byte(`{"ID":1,"Site":"hq"}`)
	if got, err := unpackResult(old); err != nil || !bytes.Equal(got, old) {
		t.Errorf("unpack(%q) = %q, %v", old, got, err)
	}
	if _, err := unpackResult([]byte{resultKeyed, '{', tokenLong, 0xff}); err == nil {
		t.Errorf("unpack of a broken packed result: no error")
	}
}

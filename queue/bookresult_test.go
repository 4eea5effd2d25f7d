package queue

import (
	"encoding/json"
	"testing"
)

// TestBookResult: a booking's idempotency record keeps its ID alone, and
// a record of the whole booking, as kept before, decodes to its ID.
func TestBookResult(t *testing.T) {
	b, err := json.Marshal(&bookResult{Booking{ID: 7, Site: "hq", Patient: "p-1", Code: "ABCDEFGH"}})
	if err != nil || string(b) != `{"id":7}` {
		t.Fatalf("encoded %s, %v; want {\"id\":7}", b, err)
	}
	old, err := json.Marshal(Booking{ID: 9, Site: "hq", Patient: "p-1"})
	if err != nil {
		t.Fatal(err)
	}
	for in, id := range map[string]int64{string(b): 7, string(old): 9} {
		var r bookResult
		if err := json.Unmarshal([]byte(in), &r); err != nil || r.ID != id || r.Patient != "" {
			t.Errorf("decode %s: %+v, %v; want ID %d alone", in, r.Booking, err, id)
		}
	}
	var r bookResult
	if err := json.Unmarshal([]byte(`{"id":"x"}`), &r); err == nil {
		t.Errorf("decode of a bad record: no error")
	}
}

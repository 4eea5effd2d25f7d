package queue

import "testing"

func TestParseStaffActor(t *testing.T) {
	for _, tt := range []struct{ actor, name, counter string }{
		{"user:li.na@counter-3", "li.na", "3"},
		{"user:a@b@counter-x@counter-7", "a@b", "x@counter-7"},
		{"keypad-3", "", ""},
		{"api:his", "", ""},
		{"user:@counter-3", "", ""},
		{"user:li.na", "", ""},
	} {
		n, c, ok := ParseStaffActor(tt.actor)
		if ok != (tt.name != "") || n != tt.name || c != tt.counter {
			t.Errorf("ParseStaffActor(%q) = %q, %q, %v", tt.actor, n, c, ok)
		}
	}
}

func TestStaffActor(t *testing.T) {
	if a := StaffActor("li.na", "3"); a != "user:li.na@counter-3" {
		t.Fatalf("StaffActor: %q", a)
	}
	if n, c, ok := ParseStaffActor(StaffActor("wang", "12")); !ok || n != "wang" || c != "12" {
		t.Fatalf("round trip: %q %q %v", n, c, ok)
	}
}

package conform

import (
	"reflect"
	"testing"

	"github.com/nowserving/nowserving/protocol/wire"
)

func TestCredentials(t *testing.T) {
	got, err := Credentials([]string{"k", "d"}, []string{"s1", "s2"}, []string{"console"})
	want := []Credential{{ID: "k", Secret: []byte("s1"), Role: wire.RoleConsole}, {ID: "d", Secret: []byte("s2"), Role: wire.RoleDisplay}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Credentials = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []struct{ ids, secrets, roles []string }{
		{nil, nil, nil},
		{[]string{"k"}, nil, nil},
		{[]string{"k"}, []string{"s"}, []string{"printer"}},
		{[]string{"k"}, []string{""}, nil},
		{[]string{"k"}, []string{"s"}, []string{"kiosk", "display"}},
	} {
		if _, err := Credentials(bad.ids, bad.secrets, bad.roles); err == nil {
			t.Errorf("Credentials(%q, %q, %q): no error", bad.ids, bad.secrets, bad.roles)
		}
	}
}

package config

import (
	"errors"
	"strings"
	"testing"
)

// TestStaffValidate: each wrong http.staff value is refused with its key.
func TestStaffValidate(t *testing.T) {
	tests := []struct{ staff, key string }{
		{`session_idle: 10s`, "http.staff.session_idle"},
		{`login_limit: -1`, "http.staff.login_limit"},
		{`trusted_header: { header: X-Remote-User }`, "http.staff.trusted_header.proxies"},
		{`trusted_header: { proxies: [127.0.0.1] }`, "http.staff.trusted_header.header"},
		{`trusted_header: { header: "X Remote", proxies: [127.0.0.1] }`, "http.staff.trusted_header.header"},
		{`trusted_header: { header: X-Remote-User, proxies: [nowhere] }`, "http.staff.trusted_header.proxies[0]"},
		{`demo_accounts: [ { name: "Li Na", password: "12345678", role: admin } ]`, "http.staff.demo_accounts[0].name"},
		{`demo_accounts: [ { name: li, password: "1234", role: admin } ]`, "http.staff.demo_accounts[0].password"},
		{`demo_accounts: [ { name: li, password: "12345678", role: root } ]`, "http.staff.demo_accounts[0].role"},
		{`demo_accounts: [ { name: li, password: "12345678", role: counter } ]`, "http.staff.demo_accounts[0].counters"},
		{`demo_accounts: [ { name: li, password: "12345678", role: counter, counters: ["9"] } ]`, "http.staff.demo_accounts[0].counters[0]"},
		{`demo_accounts: [ { name: li, password: "12345678", role: admin, sites: [x] } ]`, "http.staff.demo_accounts[0].sites[0]"},
		{`demo_accounts: [ { name: li, password: "12345678", role: admin }, { name: li, password: "12345678", role: admin } ]`, "http.staff.demo_accounts[1].name"},
	}
	for _, tt := range tests {
		y := minimal + "http:\n  staff:\n    " + tt.staff + "\n"
		_, err := load([]byte(y), Opts{LookupEnv: noEnv})
		var ve *Error
		if !errors.As(err, &ve) {
			t.Errorf("%s: err %v", tt.staff, err)
			continue
		}
		if len(ve.Problems) != 1 || ve.Problems[0].Key != tt.key {
			t.Errorf("%s: problems %v, want one at %s", tt.staff, ve.Problems, tt.key)
		}
	}
	y := minimal + "http:\n  staff:\n    session_idle: 5m\n    trusted_header: { header: X-Remote-User, proxies: [127.0.0.1, 10.0.0.0/8] }\n" +
		"    demo_accounts: [ { name: li.na, password: \"12345678\", role: counter, sites: [s], counters: [\"1\"] } ]\n"
	c, err := load([]byte(y), Opts{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.HTTP.Staff.TrustedHeader.ProxyPrefixes(); len(p) != 2 || p[0].String() != "127.0.0.1/32" || !strings.HasPrefix(p[1].String(), "10.") {
		t.Fatalf("prefixes %v", p)
	}
}

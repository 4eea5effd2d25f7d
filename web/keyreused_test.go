package web

import "testing"

// TestKeyReusedDetail: the refusal of a key used for another operation
// names both operations in plain words, one space apart (it said
// "issue A , not issue F " where the class was left empty).
func TestKeyReusedDetail(t *testing.T) {
	e := newEnv(t, nil)
	e.do("POST", "/api/v1/sites/main/tickets", "", `{"service":"A"}`, "Idempotency-Key", "same")
	for _, c := range []struct{ path, body, want string }{
		{"/api/v1/sites/main/tickets", `{"service":"F"}`, `idempotency key reused for another operation: key "same" was used for issue A, not issue F`},
		{"/api/v1/sites/main/tickets", `{"service":"A","class":"vip"}`, `idempotency key reused for another operation: key "same" was used for issue A, not issue A vip`},
		{"/api/v1/sites/main/counters/5/call", "", `idempotency key reused for another operation: key "same" was used for issue A, not call-next 5`},
	} {
		p := decode[Problem](t, e.do("POST", c.path, "", c.body, "Idempotency-Key", "same"), 422)
		if p.Code != "idempotency_key_reused" || p.Detail != c.want {
			t.Errorf("POST %s %s:\n got %s %q\nwant idempotency_key_reused %q", c.path, c.body, p.Code, p.Detail, c.want)
		}
	}
}

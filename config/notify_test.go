package config

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestLoadNotify(t *testing.T) {
	c := mustLoad(t, Opts{File: "testdata/good/notify.yaml", LookupEnv: env(t, map[string]string{"HIS_HOOK_SECRET": "his-secret-from-env-0123"})})
	n := c.Notify
	want := Notify{
		Events: []string{"BOOKING_*", "CALLED"}, Attempts: 5, Backoff: NotifyBackoff{Min: 500 * time.Millisecond, Max: time.Minute},
		Batch: DefaultNotify.Batch, Timeout: DefaultNotify.Timeout, Poll: DefaultNotify.Poll,
		Webhooks: []Webhook{
			{Name: "his", URL: "https://his.example.org/hooks/nowserving", Secret: "his-secret-from-env-0123", SecretEnv: "HIS_HOOK_SECRET"},
			{Name: "audit", URL: "http://10.0.0.7:8080/in", Secret: "audit-secret-0123456", Events: []string{"*"}},
		},
		Commands: []NotifyCommand{{Name: "sms", Run: "sms-gateway send --json", Events: []string{"BOOKING_BOOKED", "BOOKING_CANCELLED"}}},
	}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("notify\n got %+v\nwant %+v", n, want)
	}
}

// TestNotifyDefaults: without a notify section there are no receivers
// and the documented defaults.
func TestNotifyDefaults(t *testing.T) {
	c := mustLoad(t, Opts{File: "../testdata/bank.yaml", LookupEnv: bankEnv})
	n := c.Notify
	if !slices.Equal(n.Events, []string{"BOOKING_*"}) || n.Attempts != 12 || n.Backoff != (NotifyBackoff{2 * time.Second, 15 * time.Minute}) ||
		n.Batch != 50 || n.Timeout != 10*time.Second || n.Poll != time.Second || len(n.Webhooks)+len(n.Commands) != 0 {
		t.Errorf("defaults = %+v", n)
	}
}

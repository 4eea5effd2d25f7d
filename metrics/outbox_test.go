package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestOutbox(t *testing.T) {
	o := Outbox{Receivers: []OutboxReceiver{{Name: "his", Delivered: 40, Failed: 3, Dead: 1}, {Name: "sms"}, {Name: "his"}}}
	reg := prometheus.NewPedanticRegistry()
	if err := RegisterOutbox(reg, func() Outbox { return o }); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, reg, "outbox_unknown.golden")
	o.Known, o.Pending, o.Dead, o.OldestPending = true, 7, 1, 95*time.Second
	compareGolden(t, reg, "outbox.golden")
}

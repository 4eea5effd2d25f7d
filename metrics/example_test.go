package metrics_test

import (
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/nowserving/nowserving/metrics"
)

// Device states reach /metrics through plain functions, read at scrape
// time; the device packages are not imported.
func ExampleRegisterDevices() {
	reg := prometheus.NewRegistry()
	err := metrics.RegisterDevices(reg, metrics.DeviceSources{
		Printers: func() []metrics.Printer { return []metrics.Printer{{Name: "kiosk-1", Status: "paper_out"}} },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		expfmt.MetricFamilyToText(os.Stdout, mf)
	}
	// Output:
	// # HELP nowserving_printer_status Printer status: 1 for the current one.
	// # TYPE nowserving_printer_status gauge
	// nowserving_printer_status{printer="kiosk-1",status="cover_open"} 0
	// nowserving_printer_status{printer="kiosk-1",status="no_answer"} 0
	// nowserving_printer_status{printer="kiosk-1",status="ok"} 0
	// nowserving_printer_status{printer="kiosk-1",status="paper_out"} 1
}

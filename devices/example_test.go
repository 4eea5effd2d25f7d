package devices_test

import (
	"fmt"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/queue"
)

// The QR code printed on a ticket names the site, service day and number.
func ExampleDefaultQR() {
	fmt.Println(devices.DefaultQR(queue.Ticket{Site: "hospital", Day: "2026-11-30", Number: "A023"}))
	// Output: nowserving:hospital:2026-11-30:A023
}

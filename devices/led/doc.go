// Package led drives LED number boards and serial keypads over RS-232 /
// RS-485 lines (go.bug.st/serial) or serial device servers (tcp://host:port).
//
// The package knows nothing about queues or tickets: its input is a plain
// [Content] (a number, a counter, a free text, the lines of a hall board).
// A small dispatcher elsewhere maps queue events onto [Port.Show].
//
// # Drivers
//
// A [Driver] is a pure function from a board address and a [Content] to the
// frames that go on the wire. Drivers whose boards answer also implement
// [ReplyParser]. The drivers and the documents they follow:
//
//   - [Modbus]: Modbus RTU numeric displays, function 06 (Write Single
//     Register) and 16 (Write Multiple Registers), CRC-16/MODBUS. Spec:
//     "MODBUS Application Protocol Specification V1.1b3" §6.6 and §6.12, and
//     "MODBUS over Serial Line Specification and Implementation Guide V1.02"
//     §2.5.1 (RTU framing, 3.5 character silent interval) and §6.2.2 (CRC).
//   - [Onbon]: Onbon BX-5K / BX-6K controller cards, dynamic area update
//     (command group 0xA3, command 0x06), frame 0xA5 … 0x5A with byte
//     stuffing, CRC-16/ARC, GBK text. Spec: Onbon "BX-5K/6K communication
//     protocol" (二次开发协议). The vendor document itself was not available
//     when this driver was written; see [Onbon] for the field layout used and
//     which fields are configurable so a site can match its card firmware.
//   - [Alpha]: Adaptive Micro Systems "Alpha Sign Communications Protocol"
//     (document 97088061): NUL×5 SOH type address STX command … ETX checksum
//     EOT; the number goes into a STRING file so the sign updates it without
//     blanking the display.
//   - [Template]: a driver configured from [TemplateOpts] for the many small
//     vendor frames of the form "header address body checksum trailer".
//
// # Ports
//
// A [Port] owns one serial line (or one device-server connection) and all
// the boards on it: one goroutine writes, the latest content per address
// wins, frames are spaced by the protocol's gap, replies are awaited with a
// timeout, failures are retried with a capped exponential backoff, and a
// board that keeps failing is reported offline and refreshed with its
// current content when it answers again. [Port.Show] never blocks.
//
// Wiring, as cmd/nowserving would do it:
//
//	d, err := led.NewDriver(led.DriverOpts{Kind: "modbus"})
//	o := led.DefaultPortOpts()
//	o.Name, o.Driver, o.Logger = "/dev/ttyUSB0", d, logger
//	o.OnStatus = func(s led.BoardStatus) { /* metrics gauge, console */ }
//	p, err := led.NewPort(o)
//	go p.Run(ctx)              // or in an errgroup; cancel ctx or p.Close() to stop
//	p.Show(5, led.Content{Number: "A023", Counter: "5"})
//
// Names other than a device path: "tcp://host:port" (serial device server)
// and "file:PATH" (append frames to a file, for demos without hardware).
//
// # Keypads
//
// [KeypadBus] polls QSystem-style wired keypads on an RS-485 bus; the frame
// format is specified in keypad.go and in [EncodeKeypadPoll].
package led

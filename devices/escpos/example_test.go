package escpos_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/devices/escpos/escpostest"
)

func ExampleRender() {
	l := escpos.DefaultLayout()
	l.PaperMM = 58
	l.NumberSize = 2
	l.QR = escpos.QRNone
	l.Labels = map[string]escpos.Labels{"zh": {PeopleAhead: "前面还有 {{.PeopleAhead}} 人"}}
	t := escpos.Ticket{
		Site:        "Bank",
		Number:      "V007",
		PeopleAhead: 2,
		Lang:        "zh",
	}
	b, err := escpos.Render(t, l)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(escpos.Dump(b))
	// Output:
	// ESC @          initialize
	// ESC a 1        justify centre
	// ESC E 1        bold on
	// GS ! 0x11      size 2x2
	// TEXT           "Bank"
	// LF
	// GS ! 0x00      size 1x1
	// ESC E 0        bold off
	// LF
	// GS ! 0x11      size 2x2
	// TEXT           "V007"
	// LF
	// GS ! 0x00      size 1x1
	// LF
	// FS &           kanji mode on (GB18030)
	// TEXT           "前面还有"
	// FS .           kanji mode off
	// TEXT           " 2 "
	// FS &           kanji mode on (GB18030)
	// TEXT           "人"
	// FS .           kanji mode off
	// LF
	// GS V 66 3      feed and partial cut
}

func ExamplePrinter_Print() {
	fake := escpostest.NewPrinter() // a real printer: escpos.Opts{Addr: "10.0.0.50:9100"}
	defer fake.Close()
	fake.SetState(escpostest.State{Paper: escpostest.PaperOut})

	opts := escpos.DefaultOpts()
	opts.Addr = fake.Addr()
	p := escpos.NewPrinter(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.Print(ctx, []byte("\x1b@hello\n"))
	fmt.Println(errors.Is(err, escpos.ErrPaperOut), len(fake.Received()))
	// Output: true 0
}

package led_test

import (
	"fmt"

	"github.com/nowserving/nowserving/devices/led"
)

// A counter board of the common "01 addr … 07" kind, from config.
func ExampleTemplate() {
	d, err := led.NewTemplate(led.TemplateOpts{
		Header:  "01",
		Body:    "{number:-4}{counter:2}",
		Trailer: "07",
	})
	if err != nil {
		panic(err)
	}
	frames, err := d.Encode(3, led.Content{Number: "A023", Counter: "5"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", frames[0])
	// Output: 01 03 41 30 32 33 20 35 07
}

// A Modbus RTU numeric display: "A023" in holding registers 0 and 1.
func ExampleModbus() {
	d, err := led.NewModbus(led.ModbusOpts{Start: 0, Chars: 4})
	if err != nil {
		panic(err)
	}
	frames, err := d.Encode(1, led.Content{Number: "A023"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", frames[0])
	// Output: 01 10 00 00 00 02 04 41 30 32 33 b2 e9
}

// A hall board lists the last calls, most recent first.
func ExampleHall() {
	h := led.NewHall(3)
	h.Call("A021", "2")
	h.Call("B007", "4")
	c := h.Call("A022", "1")
	for _, l := range c.Lines {
		fmt.Println(l)
	}
	// Output:
	// A022 -> 1
	// B007 -> 4
	// A021 -> 2
}

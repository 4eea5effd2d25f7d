package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/devices/voice"
)

// ledDriverOpts maps a config driver onto the led package's options.
func ledDriverOpts(c config.LEDDriver) led.DriverOpts {
	o := led.DriverOpts{Kind: c.Kind}
	switch c.Kind {
	case "modbus":
		o.Modbus = led.ModbusOpts{Start: uint16(c.Start), Chars: c.Chars, Encoding: c.Encoding, Template: c.Template}
	case "onbon":
		o.Onbon = led.OnbonOpts{
			Preamble: c.Preamble, SrcAddr: uint16(c.SrcAddr), DeviceType: byte(c.DeviceType),
			ProtocolVersion: byte(c.ProtocolVersion), Area: byte(c.Area),
			X: uint16(c.X), Y: uint16(c.Y), Width: uint16(c.Width), Height: uint16(c.Height),
			Charset: c.Charset, Template: c.Template, WantReply: c.WantReply,
		}
	case "alpha":
		o.Alpha = led.AlphaOpts{StringSize: c.StringSize, Template: c.Template}
		if c.TypeCode != "" {
			o.Alpha.TypeCode = c.TypeCode[0]
		}
	case "template":
		// Validate checked the hex.
		header, _ := led.ParseHex(c.Header)
		trailer, _ := led.ParseHex(c.Trailer)
		o.Template = led.TemplateOpts{
			Header: header, Trailer: trailer, AddrFormat: c.AddrFormat, Charset: c.Charset,
			Checksum: c.Checksum, ChecksumFrom: c.ChecksumFrom, ChecksumTo: c.ChecksumTo,
			Body: c.Template, LineSep: c.LineSep,
		}
	}
	return o
}

// setMode sets a line's mode; zeros keep the defaults.
func setMode(po *led.PortOpts, baud, dataBits int, parity string, stopBits int) {
	if baud > 0 {
		po.Baud = baud
	}
	if dataBits > 0 {
		po.DataBits = dataBits
	}
	if parity != "" {
		po.Parity = parity
	}
	if stopBits > 0 {
		po.StopBits = stopBits
	}
}

// newAnnouncer builds a voice zone's engine, sink and announcer.
func newAnnouncer(z config.VoiceZone, log *slog.Logger) (*voice.Announcer, error) {
	vo := voice.DefaultOpts()
	vo.Langs, vo.Chime, vo.Repeat = z.Langs, z.Chime, z.Repeat
	vo.Logger = log.With("zone", z.Name)
	if z.Engine == "command" {
		co := voice.DefaultCommandOpts()
		co.Commands = z.Commands
		co.Timeout = 20 * time.Second
		eng, err := voice.NewCommand(co)
		if err != nil {
			return nil, fmt.Errorf("commands: %w", err)
		}
		vo.Engine = eng
	}
	if dir, ok := z.OutputDir(); ok {
		s, err := voice.NewDirSink(dir, nil)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		vo.Sink = s
	} else {
		s, err := voice.NewCommandSink(z.Output, 60*time.Second, "")
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		vo.Sink = s
	}
	a, err := voice.New(vo)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// makeFileDir creates the folder of a "file:PATH" line.
func makeFileDir(name string) error {
	path, ok := strings.CutPrefix(name, "file:")
	if !ok {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create folder for %s: %w", name, err)
	}
	return nil
}

package led

import (
	"cmp"
	"encoding/binary"
	"fmt"
)

// Onbon frame bytes and the byte stuffing of the BX-5K/6K serial protocol.
const (
	onbonStart = 0xA5
	onbonEnd   = 0x5A
	onbonEsc1  = 0xA6 // 0xA5 → A6 02, 0xA6 → A6 01
	onbonEsc2  = 0x5B // 0x5A → 5B 02, 0x5B → 5B 01
)

// OnbonOpts configures the Onbon BX-5K/6K dynamic area driver. The zero
// value of every field except Width and Height is a usable default.
type OnbonOpts struct {
	// Preamble is how many 0xA5 start bytes open a frame, 1..16 (default 8:
	// the cards use the repeated start byte to wake their UART; 1 also works
	// on network links).
	Preamble int `mapstructure:"preamble"`
	// SrcAddr is the sender address in the packet header, 0..65535
	// (default 0x8000).
	SrcAddr int `mapstructure:"src_addr"`
	// DeviceType is the controller type byte (default 0xFE: any card).
	DeviceType int `mapstructure:"device_type"`
	// ProtocolVersion is the protocol version byte (default 0x02).
	ProtocolVersion int `mapstructure:"protocol_version"`
	// Area is the dynamic area id (0–3 on BX-5K), 0..255.
	Area int `mapstructure:"area"`
	// X, Y, Width, Height place the area on the board, in pixels
	// (0..65535; width and height required).
	X      int `mapstructure:"x"`
	Y      int `mapstructure:"y"`
	Width  int `mapstructure:"width"`
	Height int `mapstructure:"height"`
	// Charset is "gbk" (default) or "ascii".
	Charset string `mapstructure:"charset"`
	// Template is the text shown (see Render); empty means DefaultText.
	// Lines are joined with a space.
	Template string `mapstructure:"template"`
	// WantReply asks the card to answer every frame (Response byte 0x01);
	// otherwise frames are sent without reply (0x02).
	WantReply bool `mapstructure:"want_reply"`
}

// withDefaults fills the options left zero.
func (o OnbonOpts) withDefaults() OnbonOpts {
	o.Preamble = cmp.Or(o.Preamble, 8)
	o.SrcAddr = cmp.Or(o.SrcAddr, 0x8000)
	o.DeviceType = cmp.Or(o.DeviceType, 0xFE)
	o.ProtocolVersion = cmp.Or(o.ProtocolVersion, 0x02)
	o.Charset = cmp.Or(o.Charset, "gbk")
	return o
}

// Check returns nil or an error holding the [OptErrors] of the options
// NewOnbon refuses.
func (o OnbonOpts) Check() error {
	var es OptErrors
	if o.Width <= 0 || o.Height <= 0 {
		es.add("width", "width and height of the area are required (pixels)")
	}
	for _, n := range []struct {
		key    string
		v, max int
	}{{"src_addr", o.SrcAddr, 0xFFFF}, {"device_type", o.DeviceType, 0xFF},
		{"protocol_version", o.ProtocolVersion, 0xFF}, {"area", o.Area, 0xFF}, {"x", o.X, 0xFFFF},
		{"y", o.Y, 0xFFFF}, {"width", o.Width, 0xFFFF}, {"height", o.Height, 0xFFFF}} {
		es.inRange(n.key, n.v, 0, n.max, "")
	}
	es.inRange("preamble", o.Preamble, 1, 16, "8")
	es.oneOf("charset", o.Charset, "ascii", "gbk")
	return es.err("onbon")
}

// Onbon drives Onbon BX-5K / BX-6K controller cards (LED strips above
// counters, Chinese hall boards) through the "dynamic area" command, which
// replaces an area's text without storing a program in flash.
//
// The vendor's document "BX-5K/6K communication protocol" could not be
// consulted when this driver was written; the layout below follows the best
// available public description of the protocol (Onbon's published serial
// captures and third-party analysers). Every value that may differ between
// card generations is a field of [OnbonOpts]; check a capture of the vendor
// tool against the golden frames in testdata/ before deploying.
//
// Frame on the wire:
//
//	A5×Preamble | stuffed(packet | CRC16) | 5A
//
// where stuffing replaces A5 with A6 02, A6 with A6 01, 5A with 5B 02 and 5B
// with 5B 01, and CRC16 is CRC-16/ARC over the unstuffed packet, low byte
// first. The packet is a 14-byte header followed by the command data:
//
//	header: DstAddr u16 LE (the board address) | SrcAddr u16 LE |
//	        Reserved ×3 (0) | Option (0) | CheckMode (0 = CRC16) |
//	        DisplayMode (0) | DeviceType | ProtocolVersion | DataLen u16 LE
//	data:   CmdGroup 0xA3 | Cmd 0x06 | Response (1 reply, 2 none) |
//	        Reserved ×2 | DeleteAreaNum (0) | AreaNum (1) |
//	        AreaDataLen u16 LE | area
//	area:   AreaType (0x06 dynamic) | X u16 | Y u16 | Width u16 | Height u16 |
//	        AreaID | LinesSizes (0) | RunMode (0 = loop) | Timeout u16 (0) |
//	        Reserved ×3 | SingleLine (1) | NewLine (2 = auto wrap) |
//	        DisplayMode (1 = static) | ExitMode (0) | Speed (0) |
//	        StayTime (0) | DataLen u32 LE | text
type Onbon struct {
	opts OnbonOpts
}

var (
	_ Driver      = (*Onbon)(nil)
	_ ReplyParser = (*Onbon)(nil)
)

// NewOnbon returns an Onbon driver.
func NewOnbon(opts OnbonOpts) (*Onbon, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	return &Onbon{opts: opts.withDefaults()}, nil
}

// Encode returns one frame replacing the dynamic area's text on the card at
// addr (0–65534; 0xFFFF is the broadcast address and is refused here).
func (o *Onbon) Encode(addr int, c Content) ([][]byte, error) {
	if err := checkAddr("onbon", addr, 0, 0xFFFE); err != nil {
		return nil, err
	}
	txt, err := encodeText(o.opts.Charset, trimSpace(text(o.opts.Template, c, " ")))
	if err != nil {
		return nil, err
	}
	if len(txt) > 4096 {
		return nil, fmt.Errorf("led: onbon text of %d bytes: %w", len(txt), ErrTooLong)
	}
	area := []byte{0x06}
	for _, v := range []int{o.opts.X, o.opts.Y, o.opts.Width, o.opts.Height} {
		area = binary.LittleEndian.AppendUint16(area, uint16(v))
	}
	area = append(area, byte(o.opts.Area), 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 0, 0, 0)
	area = binary.LittleEndian.AppendUint32(area, uint32(len(txt)))
	area = append(area, txt...)

	resp := byte(0x02)
	if o.opts.WantReply {
		resp = 0x01
	}
	data := []byte{0xA3, 0x06, resp, 0, 0, 0, 1}
	data = binary.LittleEndian.AppendUint16(data, uint16(len(area)))
	data = append(data, area...)

	pkt := onbonHeader(uint16(addr), o.opts, len(data))
	pkt = append(pkt, data...)
	return [][]byte{OnbonFrame(o.opts.Preamble, pkt)}, nil
}

func trimSpace(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

func onbonHeader(dst uint16, o OnbonOpts, dataLen int) []byte {
	h := make([]byte, 0, 14+dataLen)
	h = binary.LittleEndian.AppendUint16(h, dst)
	h = binary.LittleEndian.AppendUint16(h, uint16(o.SrcAddr))
	h = append(h, 0, 0, 0, 0, 0, 0, byte(o.DeviceType), byte(o.ProtocolVersion))
	return binary.LittleEndian.AppendUint16(h, uint16(dataLen))
}

// OnbonFrame wraps an unstuffed packet: preamble start bytes, the stuffed
// packet and its CRC-16/ARC (low byte first), the end byte.
func OnbonFrame(preamble int, pkt []byte) []byte {
	crc := CRC16ARC(pkt)
	body := binary.LittleEndian.AppendUint16(append([]byte(nil), pkt...), crc)
	f := make([]byte, 0, preamble+len(body)*2+1)
	for range preamble {
		f = append(f, onbonStart)
	}
	for _, b := range body {
		switch b {
		case onbonStart:
			f = append(f, onbonEsc1, 0x02)
		case onbonEsc1:
			f = append(f, onbonEsc1, 0x01)
		case onbonEnd:
			f = append(f, onbonEsc2, 0x02)
		case onbonEsc2:
			f = append(f, onbonEsc2, 0x01)
		default:
			f = append(f, b)
		}
	}
	return append(f, onbonEnd)
}

// DecodeOnbonFrame finds one frame in buf: it skips bytes before the first
// 0xA5, returns the unstuffed packet (header and data, CRC checked and
// removed) and the number of bytes of buf consumed. n == 0 with a nil error
// means the frame is not complete yet.
func DecodeOnbonFrame(buf []byte) (pkt []byte, n int, err error) {
	i := 0
	for i < len(buf) && buf[i] != onbonStart {
		i++
	}
	for i < len(buf) && buf[i] == onbonStart {
		i++
	}
	if i == len(buf) {
		return nil, 0, nil
	}
	var out []byte
	for j := i; j < len(buf); j++ {
		b := buf[j]
		switch b {
		case onbonEnd:
			if len(out) < 16 {
				return nil, j + 1, fmt.Errorf("led: onbon frame of %d bytes: %w", len(out), ErrReply)
			}
			body, crc := out[:len(out)-2], binary.LittleEndian.Uint16(out[len(out)-2:])
			if CRC16ARC(body) != crc {
				return nil, j + 1, fmt.Errorf("led: onbon frame: %w", ErrChecksum)
			}
			if int(binary.LittleEndian.Uint16(body[12:14])) != len(body)-14 {
				return nil, j + 1, fmt.Errorf("led: onbon frame data length %d, have %d: %w",
					binary.LittleEndian.Uint16(body[12:14]), len(body)-14, ErrReply)
			}
			return body, j + 1, nil
		case onbonEsc1, onbonEsc2:
			if j+1 == len(buf) {
				return nil, 0, nil
			}
			j++
			switch buf[j] {
			case 0x01:
				out = append(out, b)
			case 0x02:
				out = append(out, b-1)
			default:
				return nil, j + 1, fmt.Errorf("led: onbon escape %#02x %#02x: %w", b, buf[j], ErrReply)
			}
		case onbonStart:
			return nil, j, fmt.Errorf("led: onbon start byte inside frame: %w", ErrReply)
		default:
			out = append(out, b)
		}
		if len(out) > 8192 {
			return nil, j + 1, fmt.Errorf("led: onbon frame over 8192 bytes: %w", ErrTooLong)
		}
	}
	return nil, 0, nil
}

// ExpectsReply reports whether the card was asked to answer (WantReply).
func (o *Onbon) ExpectsReply() bool { return o.opts.WantReply }

// ParseReply checks a card's answer: a well-formed frame from the addressed
// card (its DstAddr is our SrcAddr, its SrcAddr the card) whose command
// group is 0xA0 (return) and whose third data byte (status) is 0. The reply
// layout is the least certain part of this driver (see [Onbon]); sites that
// cannot confirm it leave WantReply off.
func (o *Onbon) ParseReply(req, buf []byte) (bool, error) {
	pkt, n, err := DecodeOnbonFrame(buf)
	if err != nil {
		return true, err
	}
	if n == 0 {
		return false, nil
	}
	reqPkt, _, err := DecodeOnbonFrame(req)
	if err != nil || reqPkt == nil {
		return true, fmt.Errorf("led: onbon request undecodable: %w", ErrReply)
	}
	if string(pkt[0:2]) != string(reqPkt[2:4]) || string(pkt[2:4]) != string(reqPkt[0:2]) {
		return true, fmt.Errorf("led: onbon reply addresses % x: %w", pkt[0:4], ErrReply)
	}
	data := pkt[14:]
	if len(data) < 3 || data[0] != 0xA0 {
		return true, fmt.Errorf("led: onbon reply data % x: %w", data, ErrReply)
	}
	if data[2] != 0 {
		return true, fmt.Errorf("led: onbon reply status %#02x: %w", data[2], ErrReply)
	}
	return true, nil
}

package escpos

import (
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
)

// maxQRData is the largest QR Code payload in byte mode (version 40, level L);
// GS ( k function 180 refuses more.
const maxQRData = 2953

// QR Code parameters sent with GS ( k.
const (
	qrModel2 = 50 // function 165: model 2
	qrLevelM = 49 // function 169: error correction level M (15 %)
)

// qrNative appends the GS ( k sequence for a model 2, level M QR code of
// payload with the given module size.
func (w *writer) qrNative(payload string, module int) error {
	if len(payload) > maxQRData {
		return fmt.Errorf("escpos: render qr: payload of %d bytes exceeds %d: %w", len(payload), maxQRData, ErrBadLayout)
	}
	// GS ( k pL pH cn fn [parameters]; cn 49 selects QR Code, fn 65..81 is
	// "function 165..181" in the Epson reference.
	w.cmd(gs, '(', 'k', 4, 0, 49, 65, qrModel2, 0)       // 165: select model
	w.cmd(gs, '(', 'k', 3, 0, 49, 67, byte(module))      // 167: module size
	w.cmd(gs, '(', 'k', 3, 0, 49, 69, qrLevelM)          // 169: error level
	n := len(payload) + 3                                // cn fn m + data
	w.cmd(gs, '(', 'k', byte(n), byte(n>>8), 49, 80, 48) // 180: store data
	w.buf = append(w.buf, payload...)
	w.cmd(gs, '(', 'k', 3, 0, 49, 81, 48) // 181: print the stored symbol
	w.cmd(lf)
	return nil
}

// qrBitmap returns the QR code of payload at level M with its 4-module quiet
// zone, as go-qrcode draws it: bitmap[y][x] is true for a dark module.
func qrBitmap(payload string, border bool) ([][]bool, error) {
	q, err := qrcode.New(payload, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("escpos: render qr: %v: %w", err, ErrBadLayout)
	}
	q.DisableBorder = !border
	return q.Bitmap(), nil
}

// qrRaster appends the QR code as one GS v 0 raster image as wide as the
// printable area, with the symbol centred, so that it does not depend on
// whether the printer applies ESC a to raster images. The module size shrinks
// when the symbol would not fit.
func (w *writer) qrRaster(payload string, module, dots int) error {
	bm, err := qrBitmap(payload, true)
	if err != nil {
		return err
	}
	n := len(bm)
	for module > 1 && n*module > dots {
		module--
	}
	if n*module > dots {
		return fmt.Errorf("escpos: render qr: %d modules do not fit %d dots: %w", n, dots, ErrBadLayout)
	}
	img := newRaster(dots, n*module)
	left := (dots - n*module) / 2
	for y := range n * module {
		for x := range n * module {
			if bm[y/module][x/module] {
				img.set(left+x, y)
			}
		}
	}
	w.raster(img)
	return nil
}

// raster is a 1-bit image in GS v 0 layout: rows of width/8 bytes, the most
// significant bit is the leftmost dot, 1 prints.
type raster struct {
	bytesPerRow, height int
	data                []byte
}

func newRaster(widthDots, height int) *raster {
	bpr := (widthDots + 7) / 8
	return &raster{bytesPerRow: bpr, height: height, data: make([]byte, bpr*height)}
}

func (r *raster) set(x, y int) { r.data[y*r.bytesPerRow+x/8] |= 0x80 >> (x % 8) }

// raster appends GS v 0 m xL xH yL yH d1...dk with m = 0 (normal density).
func (w *writer) raster(r *raster) {
	w.cmd(gs, 'v', '0', 0,
		byte(r.bytesPerRow), byte(r.bytesPerRow>>8),
		byte(r.height), byte(r.height>>8))
	w.buf = append(w.buf, r.data...)
	w.cmd(lf)
}

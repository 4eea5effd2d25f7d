package escpos

import (
	"bytes"
	"testing"
)

// commands splits rendered bytes with ScanCommands.
func commands(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		adv, tok, err := ScanCommands(b, true)
		if err != nil {
			t.Fatalf("ScanCommands: %v", err)
		}
		out = append(out, tok)
		b = b[adv:]
	}
	return out
}

// qrStored returns the payload of the GS ( k function 180 command, checking
// its declared length, and the function numbers seen in order.
func qrStored(t *testing.T, b []byte) (string, []int) {
	t.Helper()
	var payload string
	var fns []int
	for _, c := range commands(t, b) {
		if len(c) < 7 || c[0] != gs || c[1] != '(' || c[2] != 'k' || c[5] != 49 {
			continue
		}
		fns = append(fns, 100+int(c[6]))
		if c[6] == 80 {
			if n := int(c[3]) | int(c[4])<<8; n != len(c)-5 {
				t.Fatalf("store declares %d bytes, command has %d", n, len(c)-5)
			}
			if c[7] != 48 {
				t.Fatalf("store m = %d, want 48", c[7])
			}
			payload = string(c[8:])
		}
	}
	return payload, fns
}

func TestQRNativePayloadRoundTrip(t *testing.T) {
	payloads := []string{
		"https://q.example.org/t/2026-11-29/A023",
		"A",
		string(bytes.Repeat([]byte("0123456789"), 60)), // > 255: pH in use
	}
	for _, p := range payloads {
		tk := ticketEN()
		tk.QR = p
		b, err := Render(tk, DefaultLayout())
		if err != nil {
			t.Fatal(err)
		}
		got, fns := qrStored(t, b)
		if got != p {
			t.Errorf("stored payload = %q, want %q", got, p)
		}
		want := []int{165, 167, 169, 180, 181}
		if len(fns) != len(want) {
			t.Fatalf("functions = %v, want %v", fns, want)
		}
		for i := range want {
			if fns[i] != want[i] {
				t.Errorf("functions = %v, want %v", fns, want)
			}
		}
	}
}

// rasterImage finds the GS v 0 command in b and returns its image.
func rasterImage(t *testing.T, b []byte) *raster {
	t.Helper()
	for _, c := range commands(t, b) {
		if len(c) >= 8 && c[0] == gs && c[1] == 'v' && c[2] == '0' {
			x := int(c[4]) | int(c[5])<<8
			y := int(c[6]) | int(c[7])<<8
			if len(c)-8 != x*y {
				t.Fatalf("raster data %d bytes, want %d", len(c)-8, x*y)
			}
			return &raster{bytesPerRow: x, height: y, data: c[8:]}
		}
	}
	t.Fatal("no GS v 0 in ticket")
	return nil
}

// dot reads a GS v 0 pixel as the Epson reference defines it, independently
// of raster.at: the most significant bit of each byte is the leftmost dot.
func dot(r *raster, x, y int) bool {
	return r.data[y*r.bytesPerRow+x/8]>>(7-x%8)&1 == 1
}

// sampleModules reads the QR modules back from a raster image: the dark
// bounding box is the symbol, the top-left finder pattern is 7 modules wide.
func sampleModules(t *testing.T, r *raster) [][]bool {
	t.Helper()
	w := r.bytesPerRow * 8
	minX, minY, maxX, maxY := w, r.height, -1, -1
	for y := range r.height {
		for x := range w {
			if dot(r, x, y) {
				minX, minY = min(minX, x), min(minY, y)
				maxX, maxY = max(maxX, x), max(maxY, y)
			}
		}
	}
	if maxX < 0 {
		t.Fatal("raster is blank")
	}
	run := 0
	for x := minX; x <= maxX && dot(r, x, minY); x++ {
		run++
	}
	if run%7 != 0 {
		t.Fatalf("finder pattern run of %d dots is not 7 modules", run)
	}
	module := run / 7
	size := (maxX - minX + 1) / module
	if (maxY-minY+1)/module != size || (maxX-minX+1)%module != 0 {
		t.Fatalf("symbol is not square: %dx%d dots, module %d", maxX-minX+1, maxY-minY+1, module)
	}
	// The symbol must be centred on the paper (within one dot).
	if d := minX - (w - 1 - maxX); d < -1 || d > 1 {
		t.Errorf("symbol not centred: %d dots left, %d right", minX, w-1-maxX)
	}
	grid := make([][]bool, size)
	for my := range size {
		grid[my] = make([]bool, size)
		for mx := range size {
			grid[my][mx] = dot(r, minX+mx*module+module/2, minY+my*module+module/2)
		}
	}
	return grid
}

// finderAt reports whether the 7×7 finder pattern sits at (x, y).
func finderAt(g [][]bool, x, y int) bool {
	for dy := range 7 {
		for dx := range 7 {
			ring := max(abs(dx-3), abs(dy-3))
			want := ring != 2 // dark border, light ring, dark 3×3 centre
			if g[y+dy][x+dx] != want {
				return false
			}
		}
	}
	return true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestQRRasterMatchesEncoder(t *testing.T) {
	for _, paper := range []int{58, 80} {
		for _, p := range []string{"https://q.example.org/t/2026-11-29/A023", "B7"} {
			l := DefaultLayout()
			l.PaperMM = paper
			l.QR = QRRaster
			tk := ticketEN()
			tk.QR = p
			b, err := Render(tk, l)
			if err != nil {
				t.Fatal(err)
			}
			grid := sampleModules(t, rasterImage(t, b))
			n := len(grid)
			if (n-17)%4 != 0 {
				t.Fatalf("%d modules is no QR version", n)
			}
			if !finderAt(grid, 0, 0) || !finderAt(grid, n-7, 0) || !finderAt(grid, 0, n-7) {
				t.Errorf("finder patterns missing")
			}
			want, err := qrBitmap(p, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != n {
				t.Fatalf("raster symbol %d modules, encoder %d", n, len(want))
			}
			for y := range n {
				for x := range n {
					if grid[y][x] != want[y][x] {
						t.Fatalf("paper %d payload %q: module (%d,%d) = %v, want %v", paper, p, x, y, grid[y][x], want[y][x])
					}
				}
			}
		}
	}
}

func TestQRRasterShrinksToFit(t *testing.T) {
	l := DefaultLayout()
	l.PaperMM = 58
	l.QR = QRRaster
	l.QRSize = 16
	tk := Ticket{QR: "https://q.example.org/t/2026-11-29/A023"}
	b, err := Render(tk, l)
	if err != nil {
		t.Fatal(err)
	}
	r := rasterImage(t, b)
	if r.bytesPerRow*8 != 384 {
		t.Errorf("raster width %d dots, want 384", r.bytesPerRow*8)
	}
	if r.height > 384 {
		t.Errorf("raster height %d dots does not fit 58 mm paper", r.height)
	}
}

package voice

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"
)

// rawWAV builds a WAV header by hand: fmt fields, then the chunks after fmt.
func rawWAV(tag, channels uint16, rate uint32, bits uint16, data []byte, dataSize uint32) []byte {
	align := channels * bits / 8
	b := []byte("RIFF\x00\x00\x00\x00WAVEfmt ")
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, tag)
	b = binary.LittleEndian.AppendUint16(b, channels)
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, rate*uint32(align))
	b = binary.LittleEndian.AppendUint16(b, align)
	b = binary.LittleEndian.AppendUint16(b, bits)
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, dataSize)
	b = append(b, data...)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

func TestWAVRoundTrip(t *testing.T) {
	c := &Clip{Rate: 16000, Samples: []int16{0, 1, -1, 32767, -32768, 1234}}
	b := c.WAV()
	if len(b) != 44+2*len(c.Samples) {
		t.Fatalf("len = %d, want %d", len(b), 44+2*len(c.Samples))
	}
	got, err := DecodeWAV(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rate != c.Rate || !slices.Equal(got.Samples, c.Samples) {
		t.Errorf("round trip = %+v, want %+v", got, c)
	}
}

func TestDecodeWAV(t *testing.T) {
	pcm := []byte{1, 0, 2, 0, 3, 0, 4, 0}
	withList := func() []byte { // a LIST chunk of odd length (padded) before data
		b := rawWAV(1, 1, 8000, 16, pcm, 8)
		list := append([]byte("LIST\x03\x00\x00\x00abc\x00"), b[36:]...)
		b = append(b[:36:36], list...)
		binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
		return b
	}
	ext := func() []byte {
		b := []byte("RIFF\x00\x00\x00\x00WAVEfmt \x28\x00\x00\x00")
		f := make([]byte, 40)
		binary.LittleEndian.PutUint16(f[0:], 0xfffe)
		binary.LittleEndian.PutUint16(f[2:], 1)
		binary.LittleEndian.PutUint32(f[4:], 16000)
		binary.LittleEndian.PutUint32(f[8:], 32000)
		binary.LittleEndian.PutUint16(f[12:], 2)
		binary.LittleEndian.PutUint16(f[14:], 16)
		binary.LittleEndian.PutUint16(f[24:], 1) // KSDATAFORMAT_SUBTYPE_PCM
		b = append(b, f...)
		b = append(b, "data\x04\x00\x00\x00\x05\x00\x06\x00"...)
		return b
	}
	tests := []struct {
		name    string
		in      []byte
		rate    int
		samples []int16
		bad     bool
	}{
		{"mono", rawWAV(1, 1, 8000, 16, pcm, 8), 8000, []int16{1, 2, 3, 4}, false},
		{"stereo mixed down", rawWAV(1, 2, 22050, 16, pcm, 8), 22050, []int16{1, 3}, false},
		{"odd data byte dropped", rawWAV(1, 1, 8000, 16, pcm[:7], 7), 8000, []int16{1, 2, 3}, false},
		{"streaming size", rawWAV(1, 1, 22050, 16, pcm, 0x7ffff000), 22050, []int16{1, 2, 3, 4}, false},
		{"streaming size ffffffff", rawWAV(1, 1, 22050, 16, pcm, 0xffffffff), 22050, []int16{1, 2, 3, 4}, false},
		{"list chunk", withList(), 8000, []int16{1, 2, 3, 4}, false},
		{"extensible", ext(), 16000, []int16{5, 6}, false},
		{"empty", nil, 0, nil, true},
		{"not riff", []byte("RIFX\x00\x00\x00\x00WAVE"), 0, nil, true},
		{"truncated data", rawWAV(1, 1, 8000, 16, pcm, 100), 0, nil, true},
		{"float", rawWAV(3, 1, 8000, 32, pcm, 8), 0, nil, true},
		{"8 bit", rawWAV(1, 1, 8000, 8, pcm, 8), 0, nil, true},
		{"3 channels", rawWAV(1, 3, 8000, 16, pcm[:6], 6), 0, nil, true},
		{"rate zero", rawWAV(1, 1, 0, 16, pcm, 8), 0, nil, true},
		{"rate huge", rawWAV(1, 1, 1<<30, 16, pcm, 8), 0, nil, true},
		{"no data", rawWAV(1, 1, 8000, 16, nil, 0)[:36], 0, nil, true},
		{"data before fmt", []byte("RIFF\x0c\x00\x00\x00WAVEdata\x00\x00\x00\x00"), 0, nil, true},
		{"short fmt", []byte("RIFF\x10\x00\x00\x00WAVEfmt \x04\x00\x00\x00\x01\x00\x01\x00"), 0, nil, true},
		{"chunk past end", []byte("RIFF\x10\x00\x00\x00WAVEfmt \xff\x00\x00\x00\x01\x00"), 0, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeWAV(tt.in)
			if tt.bad {
				if !errors.Is(err, ErrBadWAV) {
					t.Fatalf("err = %v, want ErrBadWAV", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Rate != tt.rate || !slices.Equal(got.Samples, tt.samples) {
				t.Errorf("got rate %d samples %v, want %d %v", got.Rate, got.Samples, tt.rate, tt.samples)
			}
		})
	}
}

func TestResampleConcat(t *testing.T) {
	c := &Clip{Rate: 8000, Samples: []int16{0, 100, 200, 300}}
	up := c.Resample(16000)
	if want := []int16{0, 50, 100, 150, 200, 250, 300, 300}; !slices.Equal(up.Samples, want) {
		t.Errorf("Resample up = %v, want %v", up.Samples, want)
	}
	all := Concat(16000, c, Silence(16000, time.Millisecond), &Clip{Rate: 16000, Samples: []int16{7}})
	if len(all.Samples) != 8+16+1 || all.Samples[len(all.Samples)-1] != 7 {
		t.Errorf("Concat = %d samples ending %d", len(all.Samples), all.Samples[len(all.Samples)-1])
	}
	if d := all.Duration(); d != 25*time.Second/16000 {
		t.Errorf("Duration = %v", d)
	}
}

func FuzzDecodeWAV(f *testing.F) {
	f.Add((&Clip{Rate: 16000, Samples: []int16{1, -2, 3}}).WAV())
	f.Add(rawWAV(1, 2, 44100, 16, []byte{1, 2, 3, 4, 5, 6, 7, 8}, 8))
	f.Add(rawWAV(1, 1, 22050, 16, []byte{1, 2}, 0x7ffff000))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeWAV(b)
		if err != nil {
			if !errors.Is(err, ErrBadWAV) {
				t.Fatalf("error %v does not wrap ErrBadWAV", err)
			}
			return
		}
		if len(c.Samples) > len(b)/2 {
			t.Fatalf("%d samples from %d bytes", len(c.Samples), len(b))
		}
		again, err := DecodeWAV(c.WAV())
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if again.Rate != c.Rate || !slices.Equal(again.Samples, c.Samples) {
			t.Fatalf("re-encode changed the clip")
		}
	})
}

package voice

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// Rate is the sample rate, in Hz, of the embedded voice pack and of every
// announcement an [Announcer] renders.
const Rate = 16000

const (
	minRate = 1000
	maxRate = 192000
	// streamSize is the smallest data chunk size taken as "unknown length":
	// writers that stream to a pipe (espeak-ng --stdout) put 0x7ffff000 or
	// 0xffffffff there. Such a chunk runs to the end of the input.
	streamSize = 0x7fff0000
)

// Clip is mono 16-bit PCM audio.
type Clip struct {
	// Rate is the sample rate in Hz.
	Rate int
	// Samples are the signed 16-bit samples.
	Samples []int16
}

// Duration is the play time of c.
func (c *Clip) Duration() time.Duration {
	if c.Rate <= 0 {
		return 0
	}
	return time.Duration(len(c.Samples)) * time.Second / time.Duration(c.Rate)
}

// Silence is a clip of d of silence at rate.
func Silence(rate int, d time.Duration) *Clip {
	n := int(int64(d) * int64(rate) / int64(time.Second))
	return &Clip{Rate: rate, Samples: make([]int16, max(n, 0))}
}

// Resample returns c at rate, by linear interpolation (c itself when the rate
// already matches). It is meant for speech, not for hi-fi.
func (c *Clip) Resample(rate int) *Clip {
	if c.Rate == rate || len(c.Samples) == 0 || c.Rate <= 0 || rate <= 0 {
		return &Clip{Rate: rate, Samples: c.Samples}
	}
	n := int(int64(len(c.Samples)) * int64(rate) / int64(c.Rate))
	out := make([]int16, n)
	step := float64(c.Rate) / float64(rate)
	last := len(c.Samples) - 1
	for i := range out {
		pos := float64(i) * step
		j := int(pos)
		if j >= last {
			out[i] = c.Samples[last]
			continue
		}
		f := pos - float64(j)
		v := float64(c.Samples[j])*(1-f) + float64(c.Samples[j+1])*f
		out[i] = int16(math.Round(v))
	}
	return &Clip{Rate: rate, Samples: out}
}

// Concat joins clips into one at rate, resampling those at another rate.
func Concat(rate int, clips ...*Clip) *Clip {
	n := 0
	rs := make([]*Clip, len(clips))
	for i, c := range clips {
		rs[i] = c.Resample(rate)
		n += len(rs[i].Samples)
	}
	out := &Clip{Rate: rate, Samples: make([]int16, 0, n)}
	for _, c := range rs {
		out.Samples = append(out.Samples, c.Samples...)
	}
	return out
}

// WAV encodes c as a canonical 44-byte-header RIFF/WAVE file, PCM 16-bit mono.
func (c *Clip) WAV() []byte {
	return c.AppendWAV(make([]byte, 0, 44+2*len(c.Samples)))
}

// AppendWAV appends the WAV encoding of c to dst.
func (c *Clip) AppendWAV(dst []byte) []byte {
	data := uint32(2 * len(c.Samples))
	dst = append(dst, "RIFF"...)
	dst = binary.LittleEndian.AppendUint32(dst, 36+data)
	dst = append(dst, "WAVEfmt "...)
	dst = binary.LittleEndian.AppendUint32(dst, 16)
	dst = binary.LittleEndian.AppendUint16(dst, 1) // PCM
	dst = binary.LittleEndian.AppendUint16(dst, 1) // mono
	dst = binary.LittleEndian.AppendUint32(dst, uint32(c.Rate))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(c.Rate)*2)
	dst = binary.LittleEndian.AppendUint16(dst, 2)  // block align
	dst = binary.LittleEndian.AppendUint16(dst, 16) // bits
	dst = append(dst, "data"...)
	dst = binary.LittleEndian.AppendUint32(dst, data)
	for _, s := range c.Samples {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(s))
	}
	return dst
}

// DecodeWAV reads a RIFF/WAVE file of 16-bit PCM, mono or stereo (mixed down
// to mono), at 1 kHz to 192 kHz. Chunks other than "fmt " and "data" are
// skipped. A data chunk whose declared size is a streaming marker (>= 0x7fff0000)
// runs to the end of the input; any other size past the end is an error. Every
// error wraps [ErrBadWAV].
func DecodeWAV(b []byte) (*Clip, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, fmt.Errorf("%w: no RIFF/WAVE header", ErrBadWAV)
	}
	var (
		haveFmt  bool
		channels int
		rate     int
	)
	rest := b[12:]
	for {
		if len(rest) < 8 {
			return nil, fmt.Errorf("%w: no data chunk", ErrBadWAV)
		}
		id := string(rest[0:4])
		size := uint64(binary.LittleEndian.Uint32(rest[4:8]))
		rest = rest[8:]
		if id == "data" {
			if !haveFmt {
				return nil, fmt.Errorf("%w: data chunk before fmt chunk", ErrBadWAV)
			}
			if size > uint64(len(rest)) {
				if size < streamSize {
					return nil, fmt.Errorf("%w: data chunk of %d bytes, %d present", ErrBadWAV, size, len(rest))
				}
				size = uint64(len(rest))
			}
			return decodePCM(rest[:size], channels, rate), nil
		}
		if size > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: %q chunk of %d bytes, %d present", ErrBadWAV, id, size, len(rest))
		}
		body := rest[:size]
		if size%2 == 1 && size < uint64(len(rest)) {
			size++ // chunks are padded to an even length
		}
		rest = rest[size:]
		if id != "fmt " {
			continue
		}
		if haveFmt {
			return nil, fmt.Errorf("%w: two fmt chunks", ErrBadWAV)
		}
		var err error
		channels, rate, err = parseFmt(body)
		if err != nil {
			return nil, err
		}
		haveFmt = true
	}
}

func parseFmt(f []byte) (channels, rate int, err error) {
	if len(f) < 16 {
		return 0, 0, fmt.Errorf("%w: fmt chunk of %d bytes", ErrBadWAV, len(f))
	}
	tag := binary.LittleEndian.Uint16(f[0:2])
	channels = int(binary.LittleEndian.Uint16(f[2:4]))
	rate = int(binary.LittleEndian.Uint32(f[4:8]))
	align := int(binary.LittleEndian.Uint16(f[12:14]))
	bits := int(binary.LittleEndian.Uint16(f[14:16]))
	switch tag {
	case 1:
	case 0xfffe: // WAVE_FORMAT_EXTENSIBLE: the sub-format GUID starts with the tag
		if len(f) < 40 || binary.LittleEndian.Uint16(f[24:26]) != 1 {
			return 0, 0, fmt.Errorf("%w: extensible format that is not PCM", ErrBadWAV)
		}
	default:
		return 0, 0, fmt.Errorf("%w: format tag %#x is not PCM", ErrBadWAV, tag)
	}
	if bits != 16 {
		return 0, 0, fmt.Errorf("%w: %d bits per sample, want 16", ErrBadWAV, bits)
	}
	if channels != 1 && channels != 2 {
		return 0, 0, fmt.Errorf("%w: %d channels, want 1 or 2", ErrBadWAV, channels)
	}
	if align != 2*channels {
		return 0, 0, fmt.Errorf("%w: block align %d for %d channels", ErrBadWAV, align, channels)
	}
	if rate < minRate || rate > maxRate {
		return 0, 0, fmt.Errorf("%w: sample rate %d out of range", ErrBadWAV, rate)
	}
	return channels, rate, nil
}

func decodePCM(data []byte, channels, rate int) *Clip {
	frame := 2 * channels
	n := len(data) / frame // a trailing partial frame is dropped
	out := make([]int16, n)
	for i := range out {
		p := data[i*frame:]
		if channels == 1 {
			out[i] = int16(binary.LittleEndian.Uint16(p))
			continue
		}
		l := int(int16(binary.LittleEndian.Uint16(p)))
		r := int(int16(binary.LittleEndian.Uint16(p[2:])))
		out[i] = int16((l + r) / 2)
	}
	return &Clip{Rate: rate, Samples: out}
}

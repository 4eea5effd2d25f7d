package voice

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Sink plays a rendered announcement.
type Sink interface {
	// Play plays wav (a complete WAV file) and returns when it has finished
	// or failed. name identifies the announcement, e.g. "A023-5".
	Play(ctx context.Context, wav []byte, name string) error
}

var (
	_ Sink = (*CommandSink)(nil)
	_ Sink = (*DirSink)(nil)
)

// CommandSink plays through an audio command such as "aplay -q -D default {file}".
type CommandSink struct {
	argv    []string
	timeout time.Duration
	tempDir string
}

// NewCommandSink returns a sink running template for each announcement. The
// template is split on spaces, then {file} is replaced by a temporary WAV
// file; without {file} the WAV goes to the command's standard input. timeout
// bounds one run (0: only ctx bounds it); tempDir empty means [os.TempDir].
func NewCommandSink(template string, timeout time.Duration, tempDir string) (*CommandSink, error) {
	argv := strings.Fields(template)
	if len(argv) == 0 {
		return nil, fmt.Errorf("voice: command sink: command: required")
	}
	if err := checkArgv(argv, "{file}"); err != nil {
		return nil, fmt.Errorf("voice: command sink: %w", err)
	}
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	return &CommandSink{argv: argv, timeout: timeout, tempDir: tempDir}, nil
}

// Play runs the command on wav.
func (s *CommandSink) Play(ctx context.Context, wav []byte, name string) error {
	usesFile := false
	for _, a := range s.argv {
		usesFile = usesFile || strings.Contains(a, "{file}")
	}
	args := append([]string(nil), s.argv...)
	var stdin *strings.Reader
	if usesFile {
		f, err := os.CreateTemp(s.tempDir, "nowserving-play-*.wav")
		if err != nil {
			return fmt.Errorf("voice: play %s: %w", name, err)
		}
		defer os.Remove(f.Name())
		_, err = f.Write(wav)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("voice: play %s: write temp file: %w", name, err)
		}
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "{file}", f.Name())
		}
	} else {
		stdin = strings.NewReader(string(wav))
	}
	if _, err := run(ctx, s.timeout, args, stdin); err != nil {
		return fmt.Errorf("voice: play %s: %w", name, err)
	}
	return nil
}

// DirSink writes each announcement as a WAV file into a folder, named
// <time>-<name>.wav, e.g. 20261129-190501.123-A023-5.wav.
type DirSink struct {
	dir string
	now func() time.Time
}

// NewDirSink returns a sink writing into dir (created if missing). now
// gives the time in the file names; nil means [time.Now].
func NewDirSink(dir string, now func() time.Time) (*DirSink, error) {
	if dir == "" {
		return nil, fmt.Errorf("voice: dir sink: dir: required")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("voice: dir sink: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &DirSink{dir: dir, now: now}, nil
}

// Play writes wav to a new file, atomically (temporary file, then rename).
func (s *DirSink) Play(ctx context.Context, wav []byte, name string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("voice: write %s: %w", name, err)
	}
	base := s.now().Format("20060102-150405.000") + "-" + safeName(name)
	path := filepath.Join(s.dir, base+".wav")
	for i := 2; ; i++ { // never overwrite an earlier announcement
		if _, err := os.Lstat(path); os.IsNotExist(err) {
			break
		}
		path = filepath.Join(s.dir, fmt.Sprintf("%s-%d.wav", base, i))
	}
	f, err := os.CreateTemp(s.dir, ".tmp-*.wav")
	if err != nil {
		return fmt.Errorf("voice: write %s: %w", name, err)
	}
	_, err = bytes.NewReader(wav).WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("voice: write %s: %w", name, err)
	}
	return nil
}

// safeName keeps letters, digits, '-' and '_' of name.
func safeName(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name) && len(b) < 64; i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "call"
	}
	return string(b)
}

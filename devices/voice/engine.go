package voice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Engine renders a phrase to audio.
type Engine interface {
	// Render speaks ph. The clip may be at any rate; the announcer resamples.
	Render(ctx context.Context, ph Phrase) (*Clip, error)
}

var (
	_ Engine = (*Pack)(nil)
	_ Engine = (*Command)(nil)
)

// CommandOpts configures a [Command] engine.
type CommandOpts struct {
	// Commands maps a language code to a command template. The template is
	// split on spaces first, then the placeholders are replaced, so {text}
	// stays one argument: {text} is the phrase's Speech, {out} a temporary
	// WAV file the command writes. Without {text} the speech goes to the
	// command's standard input; without {out} the WAV is read from its
	// standard output.
	Commands map[string]string
	// Timeout bounds one run of the command; 0 means no bound beyond ctx.
	Timeout time.Duration
	// TempDir holds the {out} files; empty means [os.TempDir].
	TempDir string
}

// DefaultCommandOpts speaks through espeak-ng: the "en" voice for English
// and "cmn-latn-pinyin" for Mandarin (the speech is tone-numbered pinyin).
func DefaultCommandOpts() CommandOpts {
	return CommandOpts{
		Commands: map[string]string{
			"en": "espeak-ng -v en -w {out} {text}",
			"zh": "espeak-ng -v cmn-latn-pinyin -w {out} {text}",
		},
		Timeout: 10 * time.Second,
	}
}

// Command is the external TTS [Engine] (espeak-ng, piper, ...).
type Command struct {
	cmds    map[string][]string
	timeout time.Duration
	tempDir string
}

// NewCommand checks opts and returns the engine.
func NewCommand(opts CommandOpts) (*Command, error) {
	c := &Command{cmds: map[string][]string{}, timeout: opts.Timeout, tempDir: opts.TempDir}
	if len(opts.Commands) == 0 {
		return nil, fmt.Errorf("voice: command engine: commands: required")
	}
	for lang, tpl := range opts.Commands {
		argv := strings.Fields(tpl)
		if len(argv) == 0 {
			return nil, fmt.Errorf("voice: command engine: commands.%s: empty", lang)
		}
		if err := checkArgv(argv, "{text}", "{out}"); err != nil {
			return nil, fmt.Errorf("voice: command engine: commands.%s: %w", lang, err)
		}
		c.cmds[lang] = argv
	}
	if c.tempDir == "" {
		c.tempDir = os.TempDir()
	}
	return c, nil
}

// checkArgv refuses placeholders other than allowed.
func checkArgv(argv []string, allowed ...string) error {
	for _, a := range argv {
		for s := a; ; {
			i := strings.IndexByte(s, '{')
			if i < 0 {
				break
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				break // a lone brace is literal
			}
			p := s[i : i+j+1]
			known := false
			for _, k := range allowed {
				known = known || p == k
			}
			if !known {
				return fmt.Errorf("unknown placeholder %s", p)
			}
			s = s[i+j+1:]
		}
	}
	return nil
}

// Render runs the command for ph's language and decodes the WAV it writes.
func (c *Command) Render(ctx context.Context, ph Phrase) (*Clip, error) {
	argv, ok := c.cmds[ph.Lang]
	if !ok {
		return nil, fmt.Errorf("voice: command render: %w %q", ErrUnknownLang, ph.Lang)
	}
	if ph.Speech == "" {
		return nil, fmt.Errorf("voice: command render %s: empty speech", ph.Lang)
	}
	f, err := os.CreateTemp(c.tempDir, "nowserving-tts-*.wav")
	if err != nil {
		return nil, fmt.Errorf("voice: command render: %w", err)
	}
	out := f.Name()
	f.Close()
	defer os.Remove(out)

	usesText, usesOut := false, false
	args := make([]string, len(argv))
	for i, a := range argv {
		usesText = usesText || strings.Contains(a, "{text}")
		usesOut = usesOut || strings.Contains(a, "{out}")
		args[i] = strings.NewReplacer("{text}", ph.Speech, "{out}", out).Replace(a)
	}
	var stdin *strings.Reader
	if !usesText {
		stdin = strings.NewReader(ph.Speech + "\n")
	}
	stdout, err := run(ctx, c.timeout, args, stdin)
	if err != nil {
		return nil, fmt.Errorf("voice: command render %s: %w", ph.Lang, err)
	}
	wav := stdout
	if usesOut {
		if wav, err = os.ReadFile(out); err != nil {
			return nil, fmt.Errorf("voice: command render %s: read output: %w", ph.Lang, err)
		}
	}
	clip, err := DecodeWAV(wav)
	if err != nil {
		return nil, fmt.Errorf("voice: command render %s: %s output: %w", ph.Lang, filepath.Base(args[0]), err)
	}
	return clip, nil
}

// run runs args with a timeout and returns its standard output; a failure
// carries the command's standard error.
func run(ctx context.Context, timeout time.Duration, args []string, stdin *strings.Reader) ([]byte, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 4096}
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return nil, fmt.Errorf("run %s: %w", args[0], err)
		}
		return nil, fmt.Errorf("run %s: %w: %s", args[0], err, msg)
	}
	return stdout.Bytes(), nil
}

// limitedBuffer keeps the first max bytes written and discards the rest.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/devices/voice"
)

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

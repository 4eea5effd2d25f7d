package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// chromiums are the names a Chromium may have on PATH; NOWSERVING_CHROMIUM
// names one elsewhere.
var chromiums = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// findChromium returns the browser that prints a report to PDF.
func findChromium() (string, error) {
	if p := os.Getenv("NOWSERVING_CHROMIUM"); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range chromiums {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("report: --format pdf prints the report page with a headless Chromium, and none of %s is on PATH "+
		"(apt-get install chromium, or set NOWSERVING_CHROMIUM); --format html writes the page to print yourself", strings.Join(chromiums, ", "))
}

// writePDF writes to w the PDF of the report page that html writes: the
// page's print stylesheet (one A4 landscape page), printed by a headless
// Chromium after its charts are drawn.
func writePDF(ctx context.Context, w io.Writer, html func(io.Writer) error) error {
	bin, err := findChromium()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "nowserving-report-")
	if err != nil {
		return fmt.Errorf("report: pdf: %w", err)
	}
	defer os.RemoveAll(dir)
	page, pdf := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.pdf")
	var b bytes.Buffer
	if err := html(&b); err != nil {
		return err
	}
	if err := os.WriteFile(page, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("report: pdf: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	args := []string{"--headless", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-pdf-header-footer",
		"--virtual-time-budget=10000", "--user-data-dir=" + filepath.Join(dir, "profile"), "--print-to-pdf=" + pdf, "file://" + page}
	if os.Geteuid() == 0 {
		args = append([]string{"--no-sandbox"}, args...) // Chromium refuses to run its sandbox as root
	}
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	got, rerr := os.ReadFile(pdf)
	if err != nil || rerr != nil || !bytes.HasPrefix(got, []byte("%PDF")) {
		return fmt.Errorf("report: pdf: %s printed no PDF: %w: %s", bin, errors.Join(err, rerr), tail(out, 400))
	}
	if _, err := w.Write(got); err != nil {
		return fmt.Errorf("report: pdf: %w", err)
	}
	return nil
}

// tail is the last n bytes of b, trimmed, for an error.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

package main

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol/protocoltest"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files in a new folder, and returns their paths and the pool that
// trusts it.
func writeCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	cert, pool := protocoltest.SelfSigned(t)
	key, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pool
}

// TestHTTPTLS serves the HTTP listener over TLS with listen.http_tls: a
// client trusting the certificate gets /healthz, a plain HTTP request is
// not served.
func TestHTTPTLS(t *testing.T) {
	certFile, keyFile, pool := writeCert(t)
	cfg := testConfig(t, serveYAML, map[string]string{
		"NOWSERVING_LISTEN_HTTP":          "127.0.0.1:0",
		"NOWSERVING_LISTEN_HTTP_TLS_CERT": certFile,
		"NOWSERVING_LISTEN_HTTP_TLS_KEY":  keyFile,
	})
	d := runDaemon(t, cfg)
	addr := d.httpAddr.String()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("GET https /healthz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET https /healthz: %s", resp.Status)
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	if resp, err := plain.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP on the TLS listener was served: %s", resp.Status)
		}
	}
}

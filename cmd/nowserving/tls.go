package main

import (
	"crypto/tls"
	"fmt"

	"github.com/nowserving/nowserving/config"
)

// tlsConfig is a listener's TLS configuration (listen.tls, listen.http_tls),
// nil without one.
func tlsConfig(t config.TLS) (*tls.Config, error) {
	if !t.Enabled() {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
	if err != nil {
		return nil, fmt.Errorf("serve: load TLS key pair: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Package tlsconfig holds the TLS settings of Volcano's webhook manager
// (cmd/webhook-manager/app/util.go configTLS) and healthz listeners
// (volcano.sh/apis helpers.StartHealthz), the same in both lines this tree
// builds (Volcano v1.15.1 and v1.14.1), which this project's managers keep
// for every listener they serve.
package tlsconfig

import "crypto/tls"

// Volcano returns a new TLS configuration with Volcano's settings and no
// certificate: TLS 1.2 or later, client certificates verified when given,
// and the three ECDHE AES-GCM cipher suites Volcano allows for TLS 1.2.
func Volcano() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ClientAuth: tls.VerifyClientCertIfGiven,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		},
	}
}

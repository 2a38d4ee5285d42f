package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"runtime/debug"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// rootsModule is the Go module the binary images' CA bundle comes from: the
// Go team's copy of Mozilla's (NSS) root store, updated as Mozilla's changes.
// Its version in hack/tools/go.mod is the version of the bundle, so the
// bundle is the same on every build machine (Linux, macOS, with or without
// dpkg) and changes only with go.mod.
const rootsModule = "golang.org/x/crypto/x509roots/fallback"

// caBundle is the PEM bundle the binary images carry at caBundlePath, made
// from rootsModule's roots in the module's order. A root the store trusts
// only with a constraint that PEM cannot carry (a distrust-after date: the
// CA is being phased out) is left out, since every TLS client of the image
// would trust it without the constraint. skipped is how many were left out.
func caBundle() (pemBytes []byte, n, skipped int, err error) {
	var buf bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			skipped++
			continue
		}
		if _, err := x509.ParseCertificate(root.Certificate); err != nil {
			return nil, 0, 0, fmt.Errorf("%s: root %d: %w", rootsModule, n+skipped, err)
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, 0, 0, err
		}
		n++
	}
	if n == 0 {
		return nil, 0, 0, fmt.Errorf("%s holds no unconstrained root", rootsModule)
	}
	return buf.Bytes(), n, skipped, nil
}

// rootsVersion is the version of rootsModule this program was built with
// (its build information), or "" when the binary carries none.
func rootsVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range info.Deps {
		if d.Path == rootsModule {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

// moduleCABundle is caBundle with the description the images' history
// records.
func moduleCABundle() (pemBytes []byte, desc string, err error) {
	pemBytes, n, skipped, err := caBundle()
	if err != nil {
		return nil, "", err
	}
	v := rootsVersion()
	if v == "" {
		v = "(version unknown)"
	}
	return pemBytes, fmt.Sprintf("the %d CA certificates of %s %s, %d with a distrust-after date left out",
		n, rootsModule, v, skipped), nil
}

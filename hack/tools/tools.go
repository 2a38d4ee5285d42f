//go:build tools

// Package tools pins the command-line tools of the local cluster (make local-up)
// whose Kubernetes libraries differ from the v0.35.3 that Volcano v1.15.1 and the
// main module are built against: KWOK v0.6.1 (k8s.io/* v0.30.4) and Helm v3.15.4
// (v0.30.3), clients that work with the local cluster's Kubernetes 1.35.3 API
// server. A separate module keeps the two graphs apart. Build them from this
// directory, e.g.
//
//	go build -o ../../_output/bin/kwok sigs.k8s.io/kwok/cmd/kwok
//	go build -o ../../_output/bin/helm helm.sh/helm/v3/cmd/helm
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)

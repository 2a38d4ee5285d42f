//go:build tools

// Package hack pins the binaries of the local cluster (make local-up) to this
// module's graph, so go.sum fixes their versions and builds need no network once
// the module cache is warm (kubectl: make kubectl). etcd 3.6's main is still the root package of
// go.etcd.io/etcd/server/v3. KWOK and Helm pin Kubernetes libraries of their own
// (v0.30, older than this module's v0.35) and live in hack/tools/go.mod instead.
package hack

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "volcano.sh/volcano/cmd/cli"
	_ "volcano.sh/volcano/cmd/controller-manager"
	_ "volcano.sh/volcano/cmd/scheduler"
	_ "volcano.sh/volcano/cmd/webhook-manager"
)

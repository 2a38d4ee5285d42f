// Command coredns is CoreDNS with only the plugins the local cluster's real
// node needs: kubernetes (records of Services and of pods with a hostname and
// subdomain, which is how the names Volcano's svc plugin gives pods resolve),
// errors and log. Building it from CoreDNS's own packages, instead of the full
// binary with every cloud plugin, keeps the cold build to a fraction.
//
// It lives in its own module so CoreDNS's client-go does not move the main
// module's Kubernetes libraries.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	// Plugins register themselves with the server in init.
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
)

func main() {
	// The directive order of a server block comes from this list; trimming it
	// to the plugins compiled in makes a Corefile naming any other fail at
	// start with "unknown directive" rather than being ignored.
	dnsserver.Directives = []string{"log", "errors", "kubernetes"}
	coremain.Run()
}

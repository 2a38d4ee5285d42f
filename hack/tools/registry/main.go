// Command registry is the local cluster's image registry: an OCI distribution
// registry (go-containerregistry's pkg/registry) on a loopback address, blobs
// in a directory, manifests in memory, until SIGTERM or SIGINT. The local
// cluster starts it with --registry (internal/localcluster) and forwards its
// port into the real node's network namespace, so that the node's containerd
// pulls from 127.0.0.1:PORT as a user's nodes pull from their registry (plain
// HTTP: containerd's CRI uses http for localhost and 127.0.0.1).
//
//	registry --addr 127.0.0.1:PORT --dir DIR
//
// It exits 2 for bad flags (an address that is not loopback included), 1 if
// it cannot listen or serve.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	fs := flag.NewFlagSet("registry", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:5000", "loopback address to listen on")
	dir := fs.String("dir", "", "directory of the blobs (created if missing)")
	_ = fs.Parse(os.Args[1:])
	if err := checkAddr(*addr); err != nil || *dir == "" {
		fmt.Fprintf(os.Stderr, "registry: --addr %q: %v; --dir %q (required)\n", *addr, err, *dir)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serve(ctx, *addr, *dir, log.New(os.Stderr, "", log.LstdFlags)); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

// checkAddr accepts HOST:PORT where HOST is a loopback IP address: the
// registry has no authentication, so nothing beyond the machine may reach it.
func checkAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return errors.New("not a loopback IP address")
	}
	return nil
}

// serve runs the registry on addr, blobs under dir, until ctx ends; it
// returns nil then, or the listener's or server's error.
func serve(ctx context.Context, addr, dir string, logger *log.Logger) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)), registry.Logger(logger)),
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case <-ctx.Done():
		// The cluster is going down: no pull is worth waiting for.
		return srv.Close()
	case err := <-done:
		return err
	}
}

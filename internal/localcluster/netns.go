package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// inNetns runs fn on an OS thread switched into the network namespace at
// nsPath (a file such as /run/netns/NAME), so that sockets fn creates belong
// to that namespace; the goroutine's other work is unaffected. A socket keeps
// its namespace for life, so listeners and connections made by fn can be used
// from any goroutine afterwards. It returns fn's error, or an error if the
// namespace cannot be opened or entered.
func inNetns(nsPath string, fn func() error) error {
	errc := make(chan error, 1)
	// A fresh goroutine owns the switched thread: if switching back fails it
	// exits still locked, and the runtime then discards the thread instead of
	// reusing it in the wrong namespace.
	go func() {
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			errc <- err
			return
		}
		defer self.Close()
		target, err := os.Open(nsPath)
		if err != nil {
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("entering network namespace %s: %w", nsPath, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("leaving network namespace %s: %w", nsPath, err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Forward is one TCP forward of the netns proxy: connections accepted on
// 127.0.0.1:Port in one network namespace are relayed to 127.0.0.1:Port in the
// other. IntoNetns forwards from the host's loopback into the namespace (the
// apiserver reaching the kubelet); otherwise from the namespace's loopback
// out to the host's (the kubelet and CoreDNS reaching the apiserver).
type Forward struct {
	Port      int
	IntoNetns bool
}

// String writes f as the proxy's command line takes it: "in:PORT" for
// IntoNetns, "out:PORT" otherwise.
func (f Forward) String() string {
	if f.IntoNetns {
		return "in:" + strconv.Itoa(f.Port)
	}
	return "out:" + strconv.Itoa(f.Port)
}

// ParseForward parses what Forward.String writes. It returns an error for any
// other form or a port outside 1..65535.
func ParseForward(s string) (Forward, error) {
	dir, port, ok := strings.Cut(s, ":")
	p, err := strconv.Atoi(port)
	if !ok || err != nil || p < 1 || p > 65535 || (dir != "in" && dir != "out") {
		return Forward{}, fmt.Errorf("forward %q: want in:PORT or out:PORT", s)
	}
	return Forward{Port: p, IntoNetns: dir == "in"}, nil
}

// RunNetnsProxy relays the forwards between the caller's network namespace
// (the host's) and the one at nsPath until ctx ends. Only loopback addresses
// are used on either side, so nothing of the real node is reachable from
// outside the machine and no pod traffic reaches the host's interfaces. It
// returns an error if a listener cannot be opened (port taken, namespace
// missing), nil when ctx ends.
func RunNetnsProxy(ctx context.Context, nsPath string, forwards []Forward) error {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for _, f := range forwards {
		addr := "127.0.0.1:" + strconv.Itoa(f.Port)
		var l net.Listener
		var err error
		if f.IntoNetns {
			l, err = net.Listen("tcp", addr)
		} else {
			err = inNetns(nsPath, func() (err error) {
				l, err = net.Listen("tcp", addr)
				return err
			})
		}
		if err != nil {
			return fmt.Errorf("forward %s: %w", f, err)
		}
		listeners = append(listeners, l)
		go acceptLoop(l, func() (net.Conn, error) {
			if !f.IntoNetns {
				return net.Dial("tcp", addr)
			}
			var c net.Conn
			err := inNetns(nsPath, func() (err error) {
				c, err = net.Dial("tcp", addr)
				return err
			})
			return c, err
		})
	}
	<-ctx.Done()
	return nil
}

// acceptLoop relays every connection accepted on l to a connection from dial,
// until l is closed.
func acceptLoop(l net.Listener, dial func() (net.Conn, error)) {
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			out, err := dial()
			if err != nil {
				in.Close()
				return
			}
			relay(in, out)
		}()
	}
}

// relay copies both ways until either side closes, then closes both.
func relay(a, b net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	cp := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		// Half-close passes the end of one direction on (a TLS close_notify
		// is not enough for every client); the other direction continues.
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		} else {
			dst.Close()
		}
	}
	go cp(a, b)
	go cp(b, a)
	wg.Wait()
	a.Close()
	b.Close()
}

// dialInNetns opens a connection from inside the network namespace at nsPath,
// for readiness checks of what runs only there (CoreDNS).
func dialInNetns(ctx context.Context, nsPath, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(nsPath, func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

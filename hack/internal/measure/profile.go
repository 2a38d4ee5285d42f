package measure

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// ProfilePiece is the length of one CPU profile request: a measurement's
// length is not known in advance, so its profile is taken in pieces
// ('go tool pprof -top' merges the pieces given together).
const ProfilePiece = 10 * time.Second

// ProfileArgs are the controller manager's extra arguments that serve its
// Go profiles at /debug/pprof on its healthz listener. Only ours has the
// flag: Volcano's stock controller manager serves no profiles.
var ProfileArgs = []string{"--profiling"}

// StartCPUProfile saves the CPU profile of c's controller manager, which
// must run with ProfileArgs, in pieces of ProfilePiece as
// <prefix>-<N>.pprof from N=1 (ProfileCPU), until the returned stop is
// called or ctx ends. stop waits for the piece under way to be dropped and
// returns ProfileCPU's error, the same on every call; it prints how many
// pieces were saved. With an empty prefix it profiles nothing and stop
// returns nil.
func (c *Cluster) StartCPUProfile(ctx context.Context, prefix string) (stop func() error, err error) {
	if prefix == "" {
		return func() error { return nil }, nil
	}
	client, _, controllerURL, err := c.MetricsEndpoints()
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		// No client timeout: a piece takes ProfilePiece to answer.
		n, err := ProfileCPU(pctx, &http.Client{Transport: client.Transport}, strings.TrimSuffix(controllerURL, metrics.Path), prefix, ProfilePiece)
		fmt.Printf("    %d CPU profile pieces of %s saved as %s-*.pprof\n", n, ProfilePiece, prefix)
		done <- err
	}()
	return sync.OnceValue(func() error { cancel(); return <-done }), nil
}

// ProfileCPU saves the CPU profile of the controller manager served at
// base (its healthz listener, without a path) in pieces of piece (whole
// seconds), as <prefix>-<N>.pprof from N=1, until ctx ends; the piece under
// way then is not saved. It returns the number of pieces saved and the
// first error other than ctx's: a failed request, an answer other than
// 200, or a file that cannot be written.
func ProfileCPU(ctx context.Context, client *http.Client, base, prefix string, piece time.Duration) (int, error) {
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(piece/time.Second))
	for n := 1; ; n++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return n - 1, err
		}
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return n - 1, nil
			}
			return n - 1, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if ctx.Err() != nil {
			return n - 1, nil
		}
		if err != nil {
			return n - 1, err
		}
		if resp.StatusCode != http.StatusOK {
			return n - 1, fmt.Errorf("%s: %s: %s", url, resp.Status, body)
		}
		if err := os.WriteFile(fmt.Sprintf("%s-%d.pprof", prefix, n), body, 0o644); err != nil {
			return n - 1, err
		}
	}
}

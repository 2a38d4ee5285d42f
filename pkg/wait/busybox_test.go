package wait

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// applets the wait script runs; the test PATH holds links to exactly
// busybox's applets, so nothing from the host's userland can stand in.
var neededApplets = []string{"sh", "nc", "wget", "timeout", "sleep", "true", "date", "printf", "wc", "mv"}

var busyboxSetup struct {
	once sync.Once
	bin  string // the busybox binary
	dir  string // a directory of links to all its applets, for PATH
	err  error
}

// TestMain removes the applet directory the tests may have created.
func TestMain(m *testing.M) {
	code := m.Run()
	if busyboxSetup.dir != "" {
		os.RemoveAll(busyboxSetup.dir)
	}
	os.Exit(code)
}

// errNoBusybox: busybox is neither on PATH nor at /bin/busybox or
// /usr/bin/busybox.
var errNoBusybox = errors.New("busybox is not on PATH nor at /bin/busybox or /usr/bin/busybox; install it (Debian/Ubuntu: apt-get install busybox-static) or put it on PATH")

// nodePrereqsState is where `make node-prereqs` writes "ready" once the real
// node's packages, busybox-static among them, are installed (hack/node.mk).
const nodePrereqsState = "../../_output/node-prereqs"

// busybox returns the busybox binary and a PATH directory of links to its
// applets. It looks for busybox on PATH, then at /bin/busybox and
// /usr/bin/busybox; it never installs it (the host's packages are the
// user's). Without one the tests are skipped, except where make
// node-prereqs installed busybox-static: there they fail, since the script's
// behaviour is only known once a real busybox has run it.
func busybox(t *testing.T) (bin, dir string) {
	t.Helper()
	s := &busyboxSetup
	s.once.Do(func() { s.bin, s.dir, s.err = setUpBusybox() })
	if errors.Is(s.err, errNoBusybox) {
		if b, err := os.ReadFile(nodePrereqsState); err != nil || strings.TrimSpace(string(b)) != "ready" {
			t.Skipf("the wait script tests need busybox: %v", s.err)
		}
	}
	if s.err != nil {
		t.Fatalf("the wait script tests need busybox: %v", s.err)
	}
	return s.bin, s.dir
}

func setUpBusybox() (bin, dir string, err error) {
	bin = findBusybox()
	if bin == "" {
		return "", "", errNoBusybox
	}
	out, err := exec.Command(bin, "--list").Output()
	if err != nil {
		return "", "", fmt.Errorf("%s --list: %v", bin, err)
	}
	applets := strings.Fields(string(out))
	have := map[string]bool{}
	for _, a := range applets {
		have[a] = true
	}
	for _, a := range neededApplets {
		if !have[a] {
			return "", "", fmt.Errorf("%s has no %q applet (the script needs %s)", bin, a, strings.Join(neededApplets, ", "))
		}
	}
	dir, err = os.MkdirTemp("", "wait-busybox-")
	if err != nil {
		return "", "", err
	}
	for _, a := range applets {
		if strings.ContainsRune(a, '/') {
			continue
		}
		if err := os.Symlink(bin, filepath.Join(dir, a)); err != nil {
			return "", "", err
		}
	}
	return bin, dir, nil
}

func findBusybox() string {
	if p, err := exec.LookPath("busybox"); err == nil {
		return p
	}
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

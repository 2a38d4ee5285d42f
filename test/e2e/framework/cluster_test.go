package framework

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// The suite requires the real node only where node-prereqs said it is ready:
// on a root machine with apt-get where it skipped (Ubuntu, cgroup v2, Docker)
// the suite runs KWOK nodes only instead of failing.
func TestRealNodeMode(t *testing.T) {
	cases := []struct {
		name  string
		env   string
		state *string
		want  localcluster.RealNodeMode
	}{
		{name: "no state file", want: localcluster.RealNodeAuto},
		{name: "ready", state: ptr("ready\n"), want: localcluster.RealNodeOn},
		{name: "something else", state: ptr("skipped\n"), want: localcluster.RealNodeAuto},
		{name: "E2E_REAL_NODE wins", env: "off", state: ptr("ready\n"), want: localcluster.RealNodeOff},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvRealNode, tc.env)
			root := t.TempDir()
			if tc.state != nil {
				p := filepath.Join(root, NodePrereqsState)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(*tc.state), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := RealNodeMode(root); got != tc.want {
				t.Errorf("RealNodeMode = %q, want %q", got, tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

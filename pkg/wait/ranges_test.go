package wait

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// The ranges of an 8,192-worker mpi hostfile, an Intel MPI one, wait targets
// and a shared hostname: busybox's sh running RangesContainer's script on the
// RangesFile of each writes exactly ExpandRanges' lines, ExpandedLen long.
func TestRangesContainerExpands(t *testing.T) {
	_, dir := busybox(t)
	files := map[string][]Range{
		"hostfile": {
			{Prefix: "big-master-", Suffix: ".big.ml.svc.cluster.local slots=1", Count: 1, Indexed: true},
			{Prefix: "big-worker-", Suffix: ".big.ml.svc.cluster.local slots=8", Count: 8192, Indexed: true},
		},
		"intel": {{Prefix: "j-worker-", Suffix: ".j.ns.svc.example.org:2", Count: 12, Indexed: true}},
		"wait-targets": {
			{Prefix: "shared.j.ns.svc.cluster.local", Suffix: ":22", Indexed: false},
			{Prefix: "j-w-", Suffix: ".j.ns.svc.cluster.local:2222", Count: 3, Indexed: true},
		},
		"empty": nil,
	}
	in, out := t.TempDir(), t.TempDir()
	for name, r := range files {
		if err := os.WriteFile(filepath.Join(in, name), []byte(RangesFile(r)), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	// A ConfigMap volume's own entries, which are not ranges.
	if err := os.Mkdir(filepath.Join(in, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := RangesContainer("hostfile", v1.VolumeMount{Name: "r", MountPath: in}, v1.VolumeMount{Name: "o", MountPath: out}, Options{})
	cmd := exec.Command(filepath.Join(dir, "sh"), "-c", c.Command[2])
	cmd.Env = []string{"PATH=" + dir}
	for _, e := range c.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the script failed: %v\n%s", err, log)
	}
	for name, r := range files {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		want := ExpandRanges(r)
		if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(string(got), "\n")); diff != "" {
			t.Errorf("%s (-ExpandRanges +script):\n%s", name, diff)
		}
		if len(want) != ExpandedLen(r) {
			t.Errorf("%s: ExpandedLen %d, ExpandRanges is %d bytes", name, ExpandedLen(r), len(want))
		}
		if !strings.Contains(string(log), filepath.Join(out, name)+": "+strconv.Itoa(strings.Count(want, "\n"))+" lines") {
			t.Errorf("the log does not give %s's lines:\n%s", name, log)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != len(files) {
		t.Errorf("%d files written, want %d (no ..data, no .tmp)", len(entries), len(files))
	}
	if got := ExpandRanges(files["hostfile"]); !strings.HasPrefix(got, "big-master-0.big.ml.svc.cluster.local slots=1\nbig-worker-0.big.ml.svc.cluster.local slots=8\n") ||
		!strings.HasSuffix(got, "\nbig-worker-8191.big.ml.svc.cluster.local slots=8\n") {
		t.Errorf("ExpandRanges: hostfile starts %q, ends %q", got[:100], got[len(got)-100:])
	}
}

// A ranges directory it cannot read fails the container.
func TestRangesContainerFails(t *testing.T) {
	_, dir := busybox(t)
	out := t.TempDir()
	c := RangesContainer("hostfile", v1.VolumeMount{Name: "r", MountPath: filepath.Join(out, "missing")}, v1.VolumeMount{Name: "o", MountPath: out}, Options{})
	cmd := exec.Command(filepath.Join(dir, "sh"), "-c", c.Command[2])
	cmd.Env = []string{"PATH=" + dir}
	for _, e := range c.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	if log, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("the script exited 0 without its ranges:\n%s", log)
	}
}

func TestRangesFile(t *testing.T) {
	got := RangesFile([]Range{
		{Prefix: "j-worker-", Suffix: ".j.ns.svc.cluster.local slots=1", Count: 3, Indexed: true},
		{Prefix: "head.j.ns.svc.cluster.local", Suffix: ":22"},
	})
	want := "3 j-worker- .j.ns.svc.cluster.local slots=1\n= head.j.ns.svc.cluster.local :22\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RangesFile (-want +got):\n%s", diff)
	}
}

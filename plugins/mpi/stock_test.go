package mpi

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	controllerMpi "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/mpi"
)

// StockMaster reads the master task as Volcano's in-tree mpi plugin does.
func TestStockMaster(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{nil, "master"},
		{[]string{}, "master"},
		{[]string{"--master=launcher"}, "launcher"},
		{[]string{"-master", "launcher"}, "launcher"},
		{[]string{"--port=2222", "--worker=w", "--master=launcher"}, "launcher"},
		{[]string{"--master=a", "--master=b"}, "b"},
		{[]string{"--master="}, ""},
		// Parsing stops at the first flag Volcano does not define, ...
		{[]string{"--slots-per-worker=2", "--master=launcher"}, "master"},
		{[]string{"--master=launcher", "--slots-per-worker=2", "--master=b"}, "launcher"},
		// ... at a malformed value, a flag without its value, ...
		{[]string{"--port=http", "--master=launcher"}, "master"},
		{[]string{"--master"}, "master"},
		// ... and at the first argument that is not a flag, or "--".
		{[]string{"w", "--master=launcher"}, "master"},
		{[]string{"--", "--master=launcher"}, "master"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.argv), func(t *testing.T) {
			volcano := controllerMpi.NewInstance(tc.argv)
			got := map[string]string{"ours": StockMaster(tc.argv), "Volcano's": volcano.GetMasterName()}
			if diff := cmp.Diff(map[string]string{"ours": tc.want, "Volcano's": tc.want}, got); diff != "" {
				t.Errorf("master of %q (-want +got):\n%s", tc.argv, diff)
			}
		})
	}
}

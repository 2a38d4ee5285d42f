package mpisample

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/internal/training/trainingtest"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
)

func TestJudgeMPI(t *testing.T) {
	for _, file := range []string{"example/mpi/mpi-digits-openmpi.yaml", "example/mpi/mpi-digits-mpich.yaml"} {
		t.Run(file, func(t *testing.T) {
			ex := trainingtest.Example(t, Sample.Training, file)
			job, pods := trainingtest.Pods(t, ex, mpi.New)
			a, errs := mpi.ParseArgs(job.Spec.Plugins[mpi.Name], job)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			hostfile := mpi.Hostfile(job, a)
			hosts := []string{job.Name + "-worker-0", job.Name + "-worker-1"}
			// mpiLog is the launcher's log: every rank's lines, rank r on
			// host[r].
			mpiLog := func(host func(rank int) string, serial string) string {
				var b strings.Builder
				for r := 0; r < 2; r++ {
					fmt.Fprintf(&b, "rank %d of 2 joined on %s\n", r, host(r))
				}
				b.WriteString("epoch 10 loss 0.7647\nepoch 40 loss 0.3081\ntest accuracy 0.9467\n")
				fmt.Fprintf(&b, "serial check: max |w - w_serial| %s\n", serial)
				for r := 0; r < 2; r++ {
					fmt.Fprintf(&b, "rank %d: parameters agree across 2 ranks (checksum 1.621367)\n", r)
				}
				return b.String()
			}
			launcher := pods[0].Name
			tests := []struct {
				name, log, hostfile, wantErr string
			}{
				{name: "one rank per slot, agreeing with the serial run", log: mpiLog(func(r int) string { return hosts[r] }, "7.77e-16"), hostfile: hostfile},
				{
					name:     "both ranks on one host of one slot",
					log:      mpiLog(func(int) string { return hosts[0] }, "7.77e-16"),
					hostfile: hostfile,
					wantErr:  "2 ranks ran on " + hosts[0] + ", which has 1 slots",
				},
				{
					name:     "the hostfile has more slots than ranks joined",
					log:      mpiLog(func(r int) string { return hosts[r] }, "7.77e-16"),
					hostfile: hostfile + job.Name + "-worker-2." + job.Name + " slots=1\n",
					wantErr:  "joined a world of 2 ranks; the hostfile has 3 slots",
				},
				{
					name:     "rank 0 differs from the serial run",
					log:      mpiLog(func(r int) string { return hosts[r] }, "0.0125"),
					hostfile: hostfile,
					wantErr:  "differ from the serial run's by 0.0125",
				},
				{
					name:    "the hostfile's ConfigMap was never seen",
					log:     mpiLog(func(r int) string { return hosts[r] }, "7.77e-16"),
					wantErr: fmt.Sprintf("launcher %s: no hostfile seen (ConfigMap %q, key hostfile)", launcher, mpi.ConfigMapName(job)),
				},
			}
			// The judge reads the hostfile of the ConfigMap the example
			// names, the one the launcher mounts.
			names := ex.PluginConfigMaps(job)
			if len(names) != 1 {
				t.Fatalf("PluginConfigMaps = %q, want the hostfile's", names)
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					run := training.Run{Pods: pods, Logs: map[string]string{launcher: tc.log}}
					if tc.hostfile != "" {
						run.ConfigMaps = map[string]map[string]string{names[0]: {mpi.HostfileKey: tc.hostfile}}
					}
					summary, err := ex.Judge(run)
					trainingtest.CheckJudged(t, summary, err, tc.wantErr)
				})
			}
		})
	}
}

// The first lines and listening lines of each example as its program (or
// its framework's daemon) prints them: Joined.Line must match the first,
// Listening the second, and neither a line printed before.
func TestExampleLines(t *testing.T) {
	trainingtest.CheckLines(t, Sample.Training, map[string]trainingtest.Lines{
		"example/mpi/mpi-digits-openmpi.yaml": {
			Joined:    []string{"rank 1 of 2 joined on mpi-digits-openmpi-worker-1"},
			Listening: []string{"Server listening on 0.0.0.0 port 2222.", "Server listening on :: port 2222."},
		},
		"example/mpi/mpi-digits-mpich.yaml": {
			Joined:    []string{"rank 0 of 2 joined on mpi-digits-mpich-worker-0"},
			Listening: []string{"Server listening on 0.0.0.0 port 2222."},
		},
	})
}

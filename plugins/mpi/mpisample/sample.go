// Package mpisample is the mpi plugin's Sample (internal/sample): what
// the generated tests and the tools need to know of it, its examples that
// run for real (training.go) and the judge of what their pods print
// (judge.go). Only tests and tools import it (through
// plugins/catalog/samples); the managers do not.
package mpisample

import (
	"fmt"
	"strings"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
)

// Sample describes the mpi plugin to the generated tests and the benchmarks
// (sample.Sample).
var Sample = sample.Sample{
	Roles:       []sample.Role{{Flag: "master", Single: true, Replicas: 1, Small: 1}, {Flag: "worker", Replicas: 4, Small: 2}},
	ValueFlags:  []string{"port", "mpi-implementation", "slots-per-worker", "wait-timeout", "cluster-domain"},
	StringFlags: []string{"wait-image"},
	BoolFlags:   []string{"wait", "launcher-as-worker"},
	ValidArgs:   []string{"--port=2222", "--mpi-implementation=intel", "--slots-per-worker=2", "--wait-timeout=300"},
	BadValues: []string{"--mpi-implementation=mvapich", "--mpi-implementation=open-mpi", "--slots-per-worker=0",
		"--slots-per-worker=1025", "--launcher-as-worker=maybe", "--cluster-domain=Cluster.Local", "--cluster-domain=cluster.local."},
	Required:   [][]string{{"master"}},
	Wait:       [2]string{"master", "worker"},
	Worker:     "worker",
	Lead:       []string{"master"},
	Check:      checkSample,
	Install:    sample.Install{Env: mpi.EnvMPIHost},
	Training:   trainingExamples,
	StockFlags: []string{"master", "worker", "port"},
	Hellos:     hellos,
}

// checkSample checks a worker's one port (sshd's) and the master's MPI_HOST
// (none of ours when too long for a container to start) and, where the plugin writes one, the hostfile: one line per worker, in
// index order.
func checkSample(c sample.Pod) error {
	if c.Role != "master" {
		if len(c.Pod.Spec.Containers[0].Ports) != 1 {
			return fmt.Errorf("worker ports %v, want the ssh port", c.Pod.Spec.Containers[0].Ports)
		}
		return nil
	}
	worker, _ := jobs.Task(c.Job, mpi.DefaultWorker)
	hosts := make([]string, c.Workers)
	lines := make([]string, c.Workers)
	for i := range hosts {
		hosts[i] = c.Host(worker, i)
		lines[i] = hosts[i] + " slots=1\n"
	}
	switch mpiHost := strings.Join(hosts, ","); {
	case c.InTree || !framework.OverArgLimit(mpi.EnvMPIHost, len(mpiHost)):
		if err := sample.WantEnv(c.Env, mpi.EnvMPIHost, mpiHost); err != nil {
			return err
		}
	case c.Env[mpi.EnvMPIHost] != "":
		return fmt.Errorf("%s of %d bytes, over the limit a container starts with", mpi.EnvMPIHost, len(c.Env[mpi.EnvMPIHost]))
	}
	cm, ok := c.ConfigMaps[mpi.ConfigMapName(c.Job)]
	if !ok {
		// Volcano's in-tree plugin, benchmarked with the same check, writes
		// no hostfile; ours always points at one.
		if _, points := c.Env[mpi.EnvOMPIHostfile]; points {
			return fmt.Errorf("the master points at a hostfile, but there is no ConfigMap %s", mpi.ConfigMapName(c.Job))
		}
		return nil
	}
	if got, want := cm.Data[mpi.HostfileKey], strings.Join(lines, ""); got != want {
		return fmt.Errorf("hostfile of %d bytes differs from the %d bytes of %d workers", len(got), len(want), c.Workers)
	}
	return nil
}

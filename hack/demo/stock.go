package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/hack/internal/measure"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
)

// stockExample returns ex as Volcano's stock controller manager runs it,
// with nothing that would help it start faster than a stock user's Job:
//
//   - the framework plugin's arguments unchanged, after checking that the
//     in-tree plugin knows every one (its framework's Sample.StockFlags:
//     the plugins parse with flag.ContinueOnError and stop at the first
//     flag they do not know, ignoring the rest, so an argument outside
//     theirs would silently change the Job);
//   - Volcano's svc plugin (and ssh for mpi) listed, as the example lists
//     them (Volcano's own webhook would add them too);
//   - mpi (Open MPI): the in-tree plugin writes no hostfile and sets no MCA
//     variables, only MPI_HOST on the launcher, so its mpirun is given
//     --host "$MPI_HOST", and the two variables of our plugin's that mpirun
//     needs in a pod, the ssh port (plm_rsh_args "-p <port>", without our
//     "-o ConnectionAttempts=10", which would retry) and FQDN host names
//     (orte_keep_fqdn_hostnames), are set in the launcher's template.
//
// The wait containers are simply not there: Volcano's plugins add none
// unless asked (stockWaitExample asks pytorch's).
// It returns an error naming what Volcano's plugin cannot run.
func stockExample(ex *example) (*example, error) {
	known := samples.Of(ex.framework).StockFlags
	if len(known) == 0 {
		return nil, fmt.Errorf("%s: Volcano has no in-tree %s plugin", ex.file, ex.framework)
	}
	job := ex.job.DeepCopy()
	flags := map[string]string{}
	for _, a := range job.Spec.Plugins[ex.framework] {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !hasValue || !slices.Contains(known, name) {
			return nil, fmt.Errorf("%s: Volcano's %s plugin does not take %q (it knows --%s=VALUE only)", ex.file, ex.framework, a, strings.Join(known, ", --"))
		}
		flags[name] = value
	}
	job.Spec.Plugins = maps.Clone(job.Spec.Plugins)
	need := []string{framework.SvcPlugin}
	if ex.framework == mpi.Name {
		need = append(need, framework.SSHPlugin)
		if err := rewriteLauncher(ex, job, flags); err != nil {
			return nil, err
		}
	}
	for _, p := range need {
		if _, ok := job.Spec.Plugins[p]; !ok {
			job.Spec.Plugins[p] = []string{}
		}
	}
	out := *ex
	out.job, out.stock = job, true
	return &out, nil
}

// stockWaitArgs are what stockWaitExample adds to a stock PyTorch Job's
// plugin: Volcano's --wait-master-enabled, whose init container on every
// worker loops on nc -z against the master's port (every 2 s, 300 s at
// most), and --wait-master-image naming the training image: the node pulls
// nothing, so stock's default, Docker Hub's busybox:1.36.1, is not on it,
// and the node's own busybox (Debian's 1.35.0) has an nc without -z and a
// sh without /dev/tcp; the training image has OpenBSD's nc.
var stockWaitArgs = []string{measure.StockWaitArg, "--wait-master-image=" + training.Image}

// stockWaitExample returns the stock PyTorch example ex (stockExample's)
// with stockWaitArgs added to its pytorch plugin; ex is left alone.
func stockWaitExample(ex *example) *example {
	job := ex.job.DeepCopy()
	job.Spec.Plugins[pytorch.Name] = append(job.Spec.Plugins[pytorch.Name], stockWaitArgs...)
	out := *ex
	out.job = job
	return &out
}

// rewriteLauncher makes the launcher of job (task --master, Volcano's
// default "master") run `mpirun --host "$MPI_HOST" ...` with the ssh port
// and FQDN host names set (see stockExample).
func rewriteLauncher(ex *example, job *batch.Job, flags map[string]string) error {
	master, port := mpi.DefaultMaster, strconv.Itoa(mpi.DefaultPort)
	if m, ok := flags["master"]; ok {
		master = m
	}
	if p, ok := flags["port"]; ok {
		if _, err := strconv.Atoi(p); err != nil {
			return fmt.Errorf("%s: mpi --port=%q", ex.file, p)
		}
		port = p
	}
	for i := range job.Spec.Tasks {
		task := &job.Spec.Tasks[i]
		if task.Name != master {
			continue
		}
		for j := range task.Template.Spec.Containers {
			c := &task.Template.Spec.Containers[j]
			if c.Name != ex.real.Container {
				continue
			}
			if len(c.Command) == 0 || c.Command[0] != "mpirun" {
				return fmt.Errorf("%s: the launcher runs %q, not mpirun (Open MPI)", ex.file, c.Command)
			}
			// sh puts "mpirun" in $0 and the rest of the command in "$@".
			c.Command = append([]string{"sh", "-c", `exec mpirun --host "$` + mpi.EnvMPIHost + `" "$@"`, "mpirun"}, c.Command[1:]...)
			c.Env = append(c.Env,
				corev1.EnvVar{Name: mpi.EnvOMPIRshArgs, Value: "-p " + port},
				corev1.EnvVar{Name: mpi.EnvOMPIKeepFQDN, Value: "true"})
			return nil
		}
		return fmt.Errorf("%s: task %s has no container %s", ex.file, master, ex.real.Container)
	}
	return fmt.Errorf("%s: no launcher task %s", ex.file, master)
}

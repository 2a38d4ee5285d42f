package xgboost

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	utiltesting "github.com/vcplugins/framework-plugins/pkg/testing"
)

// baseJob is the Sample's base Job: a task per role with replicas, named as
// the role flag's default, workers scaled to workers when > 0.
func baseJob(workers int32, args ...string) *batch.Job {
	b := utiltesting.MakeJob("xgb")
	for _, r := range sample.Roles {
		n := r.Replicas
		if r.Flag == sample.Worker && workers > 0 {
			n = workers
		}
		if n > 0 {
			b.Task(utiltesting.MakeTask(r.Flag, n).Obj())
		}
	}
	return b.Plugin(Name, args...).Obj()
}

// The Sample lists exactly the flags ParseArgs knows, each of its kind.
func TestSampleFlags(t *testing.T) {
	var listed []string
	for _, r := range sample.Roles {
		listed = append(listed, r.Flag)
	}
	listed = append(append(append(listed, sample.ValueFlags...), sample.StringFlags...), sample.BoolFlags...)
	// ParseArgs names every flag it accepts when it meets an unknown one.
	_, errs := ParseArgs([]string{"--no-such-flag"}, nil)
	msg := utiltesting.ErrorString(errs)
	_, accepted, ok := strings.Cut(msg, "accepted flags: ")
	if !ok {
		t.Fatalf("no flag list in %q", msg)
	}
	var known []string
	for _, f := range strings.Split(accepted, ", ") {
		known = append(known, strings.TrimPrefix(f, "--"))
	}
	sort.Strings(listed)
	if diff := cmp.Diff(known, listed); diff != "" {
		t.Errorf("Sample flags (-ParseArgs +Sample):\n%s", diff)
	}
	for _, f := range sample.Roles {
		if _, errs := ParseArgs([]string{"--" + f.Flag + "=t"}, nil); len(errs) > 0 {
			t.Errorf("role flag %s: %v", f.Flag, errs)
		}
	}
	for _, f := range sample.ValueFlags {
		if _, errs := ParseArgs([]string{"--" + f + "="}, nil); len(errs) == 0 {
			t.Errorf("value flag %s accepts an empty value", f)
		}
	}
	for _, f := range sample.StringFlags {
		if _, errs := ParseArgs([]string{"--" + f + "="}, nil); len(errs) > 0 {
			t.Errorf("string flag %s: %v", f, errs)
		}
	}
	for _, f := range sample.BoolFlags {
		if _, errs := ParseArgs([]string{"--" + f}, nil); len(errs) > 0 {
			t.Errorf("bool flag %s given bare: %v", f, errs)
		}
	}
}

func TestSampleArgs(t *testing.T) {
	for _, a := range sample.ValidArgs {
		if errs := Framework.Describe([]string{a}, baseJob(0, a)).Errs; len(errs) > 0 {
			t.Errorf("valid %q denied: %v", a, errs)
		}
	}
	if errs := Framework.Describe(sample.ValidArgs, baseJob(0, sample.ValidArgs...)).Errs; len(errs) > 0 {
		t.Errorf("the valid arguments together denied: %v", errs)
	}
	for _, a := range sample.BadValues {
		errs := Framework.Describe([]string{a}, baseJob(0, a)).Errs
		if len(errs) == 0 {
			t.Errorf("bad %q accepted", a)
			continue
		}
		if msg := utiltesting.ErrorString(errs); strings.Contains(msg, "unknown flag") {
			t.Errorf("bad %q is an unknown flag, not a bad value: %s", a, msg)
		}
	}
}

func TestSampleRequiredAndWait(t *testing.T) {
	for _, set := range sample.Required {
		job := baseJob(0)
		job.Spec.Tasks = slices.DeleteFunc(job.Spec.Tasks, func(t batch.TaskSpec) bool { return slices.Contains(set, t.Name) })
		if errs := Framework.Describe(nil, job).Errs; len(errs) == 0 {
			t.Errorf("a job without %v accepted", set)
		}
	}
	// Dropping a role not in Required is accepted: the set is complete.
	for _, r := range sample.Roles {
		required := slices.ContainsFunc(sample.Required, func(set []string) bool { return slices.Contains(set, r.Flag) })
		if required || r.Replicas == 0 {
			continue
		}
		job := baseJob(0)
		job.Spec.Tasks = slices.DeleteFunc(job.Spec.Tasks, func(t batch.TaskSpec) bool { return t.Name == r.Flag })
		if errs := Framework.Describe(nil, job).Errs; len(errs) > 0 {
			t.Errorf("a job without optional role %s denied: %v", r.Flag, errs)
		}
	}
	d := Framework.Describe(nil, baseJob(0))
	want := []framework.Wait{{From: sample.Wait[0], To: sample.Wait[1], FirstOnly: true}}
	if diff := cmp.Diff(want, d.Waits); diff != "" {
		t.Errorf("the base job's waits are not the Sample's Wait (-sample +describe):\n%s", diff)
	}
}

// Check passes on every pod the plugin made and names what is wrong on a
// pod it did not make right.
func TestSampleCheck(t *testing.T) {
	const workers = 6
	job := baseJob(workers)
	for _, r := range sample.Roles {
		task, _ := jobs.Task(job, r.Flag)
		for i := 0; i < int(task.Replicas); i++ {
			pod := runPod(t, job, r.Flag, i)
			c := framework.SampleCheck{Job: job, Pod: pod, Role: r.Flag, Index: i, Workers: workers, Env: utiltesting.Env(pod, 0)}
			if err := sample.Check(c); err != nil {
				t.Errorf("%s %d: %v", r.Flag, i, err)
			}
		}
	}
	pod := runPod(t, job, "worker", 2)
	cases := map[string]struct {
		edit func(map[string]string)
		want string
	}{
		"nothing injected":       {func(env map[string]string) { clear(env) }, `worker 2: RANK = "" (set: false), want "3"`},
		"rank of the index":      {func(env map[string]string) { env[EnvRank] = "2" }, `worker 2: RANK = "2" (set: true), want "3"`},
		"task id not the rank":   {func(env map[string]string) { env[EnvTaskID] = "0" }, `worker 2: DMLC_TASK_ID = "0" (set: true), want "3"`},
		"workers only counted":   {func(env map[string]string) { env[EnvNumWorker] = "6" }, `worker 2: DMLC_NUM_WORKER = "6" (set: true), want "7"`},
		"tracker somewhere else": {func(env map[string]string) { env[EnvTrackerURI] = "xgb-worker-0.xgb" }, `worker 2: DMLC_TRACKER_URI = "xgb-worker-0.xgb" (set: true), want "xgb-master-0.xgb"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := utiltesting.Env(pod, 0)
			tc.edit(env)
			err := sample.Check(framework.SampleCheck{Job: job, Pod: pod, Role: "worker", Index: 2, Workers: workers, Env: env})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Check = %v, want %q", err, tc.want)
			}
		})
	}
}

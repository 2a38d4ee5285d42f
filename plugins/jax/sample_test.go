package jax

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	utiltesting "github.com/vcplugins/framework-plugins/pkg/testing"
)

// baseJob is the Sample's base Job: each role's task under its flag's
// default name, with the Sample's replicas.
func baseJob(args ...string) *batch.Job {
	b := utiltesting.MakeJob("jx")
	for _, r := range sample.Roles {
		if r.Replicas > 0 {
			b.Task(utiltesting.MakeTask(r.Flag, r.Replicas).Obj())
		}
	}
	return b.Plugin(Name, args...).Obj()
}

var acceptedFlags = regexp.MustCompile(`accepted flags: (.*)$`)

// The Sample lists exactly the flags ParseArgs knows: the accepted flags an
// unknown flag's error names.
func TestSampleFlagsAreTheParsersFlags(t *testing.T) {
	_, errs := ParseArgs([]string{"--no-such-flag=1"}, nil)
	m := acceptedFlags.FindStringSubmatch(utiltesting.ErrorString(errs))
	if m == nil {
		t.Fatalf("no accepted flags in %q", utiltesting.ErrorString(errs))
	}
	parsed := strings.Split(m[1], ", ")
	var listed []string
	for _, r := range sample.Roles {
		listed = append(listed, "--"+r.Flag)
	}
	for _, f := range slices.Concat(sample.ValueFlags, sample.StringFlags, sample.BoolFlags) {
		listed = append(listed, "--"+f)
	}
	sort.Strings(listed)
	if diff := cmp.Diff(parsed, listed); diff != "" {
		t.Errorf("Sample's flags (-ParseArgs +Sample):\n%s", diff)
	}
}

// Every flag of the Sample parses with a value of its kind, and ValidArgs are
// accepted on the base Job.
func TestSampleFlagsParse(t *testing.T) {
	var argv []string
	for _, r := range sample.Roles {
		argv = append(argv, "--"+r.Flag+"="+r.Flag)
	}
	values := map[string]string{"port": "1234", "wait-timeout": "90s"}
	for _, f := range sample.ValueFlags {
		v, ok := values[f]
		if !ok {
			t.Fatalf("no test value for value flag --%s", f)
		}
		argv = append(argv, "--"+f+"="+v)
	}
	for _, f := range sample.StringFlags {
		argv = append(argv, "--"+f+"=")
	}
	for _, f := range sample.BoolFlags {
		argv = append(argv, "--"+f)
	}
	for _, args := range [][]string{argv, sample.ValidArgs} {
		job := baseJob(args...)
		if d := Framework.Describe(args, job); len(d.Errs) > 0 {
			t.Errorf("%v: %v", args, d.Errs.ToAggregate())
		}
	}
}

func TestSampleBadValuesAreDenied(t *testing.T) {
	if len(sample.BadValues) == 0 {
		t.Fatal("no BadValues")
	}
	for _, arg := range sample.BadValues {
		t.Run(arg, func(t *testing.T) {
			job := baseJob(arg)
			errs := Framework.Describe(job.Spec.Plugins[Name], job).Errs
			if len(errs) == 0 || strings.Contains(errs.ToAggregate().Error(), "unknown flag") {
				t.Errorf("%s on the base Job: errors %v, want a denial of its value", arg, errs)
			}
		})
	}
}

// Dropping the tasks of each Required set makes the plugin deny the Job.
func TestSampleRequired(t *testing.T) {
	for _, set := range sample.Required {
		b := utiltesting.MakeJob("jx").Task(utiltesting.MakeTask("other", 1).Obj())
		for _, r := range sample.Roles {
			if r.Replicas > 0 && !slices.Contains(set, r.Flag) {
				b.Task(utiltesting.MakeTask(r.Flag, r.Replicas).Obj())
			}
		}
		job := b.Plugin(Name).Obj()
		if errs := Framework.Describe(nil, job).Errs; len(errs) == 0 {
			t.Errorf("the base Job without %v is accepted", set)
		}
	}
}

// Check accepts what the plugin injects into every pod of the base Job and
// names the variable when a pod got a wrong one.
func TestSampleCheck(t *testing.T) {
	job := baseJob("--port=1234")
	workers := int(sample.Roles[0].Replicas)
	check := func(index int, edit func(map[string]string)) error {
		pod := runPod(t, job, sample.Worker, index)
		env := utiltesting.Env(pod, 0)
		if edit != nil {
			edit(env)
		}
		return sample.Check(framework.SampleCheck{Job: job, Pod: pod, Role: sample.Worker, Index: index, Workers: workers, Env: env})
	}
	for i := 0; i < workers; i++ {
		if err := check(i, nil); err != nil {
			t.Errorf("pod %d: %v", i, err)
		}
	}
	bad := map[string]func(map[string]string){
		EnvJAXProcessID:          func(e map[string]string) { e[EnvJAXProcessID] = "0" },
		EnvProcessID:             func(e map[string]string) { delete(e, EnvProcessID) },
		EnvJAXNumProcesses:       func(e map[string]string) { e[EnvJAXNumProcesses] = "3" },
		EnvJAXCoordinatorAddress: func(e map[string]string) { e[EnvJAXCoordinatorAddress] = "jx-worker-0.jx:6666" },
	}
	for name, edit := range bad {
		if err := check(2, edit); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("wrong %s: Check = %v, want an error naming it", name, err)
		}
	}
}

// The jax Jobs of the e2e invalid corpus are denied with the message their
// annotation expects; the plugin's own part of it comes from ParseArgs.
func TestInvalidCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "test", "e2e", "testdata", "invalid", "jax-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("%d jax files in the invalid corpus, want at least 4", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			job := &batch.Job{}
			if err := yaml.UnmarshalStrict(raw, job); err != nil {
				t.Fatal(err)
			}
			want := job.Annotations["e2e.vcplugins.io/expect-denied"]
			errs := Framework.Describe(job.Spec.Plugins[Name], job).Errs
			if want == "" || !strings.Contains(utiltesting.ErrorString(errs), want) {
				t.Errorf("errors %q, want one containing %q", utiltesting.ErrorString(errs), want)
			}
		})
	}
}

package plugins

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
)

var acceptedFlags = regexp.MustCompile(`accepted flags: (.*)$`)

// sampleJob is the base Job of s: each role with replicas, its task named as
// its flag, the plugin given args.
func sampleJob(name string, s *sample.Sample, drop []string, args ...string) *batch.Job {
	j := jobtest.MakeJob("sample")
	for _, r := range s.Roles {
		if r.Replicas > 0 && !slices.Contains(drop, r.Flag) {
			j.Task(jobtest.MakeTask(r.Flag, r.Replicas).Obj())
		}
	}
	return j.Plugin(name, args...).Obj()
}

// Each framework's Sample tells the truth about its plugin: its flags are
// exactly the plugin's, its valid arguments pass and its bad values and
// required roles are denied on its base Job, and that Job passes as is.
// The generated tests and the benchmarks trust the Samples.
func TestSamples(t *testing.T) {
	for _, f := range samples.Frameworks() {
		t.Run(f.Name, func(t *testing.T) { checkSample(t, f) })
	}
}

// checkSample is TestSamples for one framework.
func checkSample(t *testing.T, f samples.Framework) {
	s := f.Sample
	if s == nil || s.Check == nil || s.Worker == "" || len(s.Roles) == 0 || len(s.ValidArgs) == 0 {
		t.Fatalf("incomplete Sample: %+v", s)
	}
	errs := f.Describe([]string{"--no-such-flag"}, nil).Errs
	if len(errs) != 1 {
		t.Fatalf("--no-such-flag: errors %v, want one", errs)
	}
	m := acceptedFlags.FindStringSubmatch(errs[0].Detail)
	if m == nil {
		t.Fatalf("--no-such-flag: %q lists no accepted flags", errs[0].Detail)
	}
	var want []string
	for _, flag := range s.Flags() {
		want = append(want, "--"+flag)
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, strings.Split(m[1], ", ")); diff != "" {
		t.Errorf("Sample flags (-sample +plugin):\n%s", diff)
	}
	if errs := f.Describe(nil, sampleJob(f.Name, s, nil)).Errs; len(errs) > 0 {
		t.Errorf("base Job denied: %v", errs)
	}
	for _, a := range s.ValidArgs {
		if errs := f.Describe([]string{a}, sampleJob(f.Name, s, nil, a)).Errs; len(errs) > 0 {
			t.Errorf("valid argument %s denied: %v", a, errs)
		}
	}
	for _, a := range s.BadValues {
		if errs := f.Describe([]string{a}, sampleJob(f.Name, s, nil, a)).Errs; len(errs) == 0 {
			t.Errorf("bad value %s allowed", a)
		}
	}
	for _, drop := range s.Required {
		if errs := f.Describe(nil, sampleJob(f.Name, s, drop)).Errs; len(errs) == 0 {
			t.Errorf("base Job without %v allowed", drop)
		}
	}
	roles := s.RoleFlags()
	for _, flag := range append(slices.Clone(s.Lead), s.Worker, s.Wait[0], s.Wait[1]) {
		if flag != "" && !slices.Contains(roles, flag) {
			t.Errorf("%q (Lead, Worker or Wait) is not a role flag of %v", flag, roles)
		}
	}
	var small []string
	for _, r := range s.Roles {
		if r.Small > 0 {
			small = append(small, r.Flag)
		}
	}
	if len(small) == 0 || s.Install.Env == "" {
		t.Errorf("no small Job (Role.Small) or no Install.Env: %+v", s)
	}
	for _, drop := range [][]string{nil, small} {
		// The small Job, as make sweep runs it and, with one pod per role,
		// make test-install with its Install.Args.
		j := jobtest.MakeJob("small")
		for _, r := range s.Roles {
			if r.Small > 0 {
				n := r.Small
				if drop != nil {
					n = 1
				}
				j.Task(jobtest.MakeTask(r.Flag, n).Obj())
			}
		}
		argv := append([]string{"--wait-image=busybox"}, s.Install.Args...)
		if errs := f.Describe(argv, j.Plugin(f.Name, argv...).Obj()).Errs; len(errs) > 0 {
			t.Errorf("small Job (one pod per role: %v) denied: %v", drop != nil, errs)
		}
	}
}

// Package trainingtest holds what the tests of the framework samples' training
// examples and judges share (plugins/<framework>/<framework>sample): finding
// an example or a hello, the pods of an example's Job as its plugin makes
// them, and checking a judge's verdict or an example's start-up lines. Only
// _test.go files import it.
package trainingtest

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
)

// Example returns the example of examples whose File is file, failing t
// when there is none.
func Example(t *testing.T, examples []training.Example, file string) training.Example {
	t.Helper()
	return find(t, examples, func(ex training.Example) string { return ex.File }, file)
}

// Hello returns the hello of hellos whose Source is source, failing t when
// there is none.
func Hello(t *testing.T, hellos []training.Hello, source string) training.Hello {
	t.Helper()
	return find(t, hellos, func(h training.Hello) string { return h.Source }, source)
}

// find returns the item of items whose file is file, failing t when there
// is none.
func find[T any](t *testing.T, items []T, fileOf func(T) string, file string) T {
	t.Helper()
	for _, x := range items {
		if fileOf(x) == file {
			return x
		}
	}
	t.Fatalf("no %T of %s", *new(T), file)
	return *new(T)
}

// Pods returns ex's Job, in namespace "ns", and its pods as the controller
// creates them and build (ex's framework plugin) mutates them, task by task
// in index order.
func Pods(t *testing.T, ex training.Example, build jobtest.Builder) (*batch.Job, []*corev1.Pod) {
	t.Helper()
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	job, err := training.LoadJob(root, ex.File)
	if err != nil {
		t.Fatal(err)
	}
	job.Namespace = "ns"
	var pods []*corev1.Pod
	for _, task := range job.Spec.Tasks {
		for i := 0; i < int(task.Replicas); i++ {
			pods = append(pods, jobtest.RunPod(t, build, ex.Framework, job, task.Name, i))
		}
	}
	return job, pods
}

// CheckJudged fails t unless a judge's summary and err are what wantErr
// asks: a non-empty summary and no error when wantErr is "", else an error
// containing wantErr.
func CheckJudged(t *testing.T, summary string, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("Judge: %v", err)
	case wantErr == "" && summary == "":
		t.Errorf("Judge: empty summary")
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("Judge error = %v, want one containing %q", err, wantErr)
	}
}

// LogEdit is a case of a judge's table test: Edit changes the logs of a good
// run (nil: none); WantErr is what the judge must then say ("": a good
// verdict, as CheckJudged has it).
type LogEdit struct {
	Name    string
	Edit    func(logs map[string]string)
	WantErr string
}

// JudgeEdits runs, as a subtest per case, ex.Judge on pods with the logs of
// good (a new map each call) as the case edits them, and checks the verdict
// (CheckJudged).
func JudgeEdits(t *testing.T, ex training.Example, pods []*corev1.Pod, good func() map[string]string, cases []LogEdit) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			logs := good()
			if tc.Edit != nil {
				tc.Edit(logs)
			}
			summary, err := ex.Judge(training.Run{Pods: pods, Logs: logs})
			CheckJudged(t, summary, err, tc.WantErr)
		})
	}
}

// Lines are log lines of an example's program, as its pods print them, for
// its Joined.Line and Listening.
type Lines struct {
	// Joined must match Joined.Line; Listening must match Listening (and
	// be empty when Listening is nil); Neither must match neither.
	Joined, Listening, Neither []string
}

// CheckLines fails t unless every example of examples has Lines in lines
// (by File) and its Joined.Line and Listening match them as Lines says.
func CheckLines(t *testing.T, examples []training.Example, lines map[string]Lines) {
	t.Helper()
	for _, ex := range examples {
		t.Run(ex.File, func(t *testing.T) {
			s, ok := lines[ex.File]
			if !ok {
				t.Fatalf("no sample lines for %s: add them", ex.File)
			}
			if ex.Joined.Line == nil {
				t.Fatal("no Joined.Line")
			}
			for _, l := range s.Joined {
				if !ex.Joined.Line.MatchString(l) {
					t.Errorf("Joined.Line %s does not match %q", ex.Joined.Line, l)
				}
			}
			if (ex.Listening == nil) != (len(s.Listening) == 0) {
				t.Errorf("Listening %v, samples %q", ex.Listening, s.Listening)
			}
			for _, l := range s.Listening {
				if ex.Listening != nil && !ex.Listening.MatchString(l) {
					t.Errorf("Listening %s does not match %q", ex.Listening, l)
				}
			}
			for _, l := range s.Neither {
				if ex.Joined.Line.MatchString(l) || ex.Listening != nil && ex.Listening.MatchString(l) {
					t.Errorf("%q matches Joined.Line or Listening", l)
				}
			}
		})
	}
}

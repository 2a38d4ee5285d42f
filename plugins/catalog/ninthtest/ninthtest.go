// Package ninthtest is a ninth framework for tests only: a lead task and
// workers, the lead's address in one variable, the workers waiting for the
// lead's port, with its Sample. Register adds it to the catalog and its
// Sample to plugins/catalog/samples for one test, which shows that the
// controller's builders, the admission, make sweep's jobs, make
// test-install's Jobs and the real-node and hello examples (samples.Examples
// and Hellos, which make demo and the e2e suite run) take it up from those
// two lists alone. Only _test.go files import this package.
package ninthtest

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/inject"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
)

const (
	// Name is the plugin's name in a Job's plugins stanza.
	Name = "ninth"
	// EnvLead is the one variable the plugin sets: <lead pod 0's host>:<port>.
	EnvLead = "NINTH_LEAD"
	// The role flags' defaults and the lead's port.
	DefaultLead   = "lead"
	DefaultWorker = "worker"
	DefaultPort   = 7777
)

// Args are the plugin's arguments: --lead and --worker (task names), --port
// and the wait flags.
type Args struct {
	Lead, Worker string
	Port         int
	Wait         wait.Options
}

// ParseArgs parses the arguments and, when job is not nil, checks them
// against it: a lead task of one pod and a worker task, both required.
func ParseArgs(argv []string, job *batch.Job) (*Args, field.ErrorList) {
	a := &Args{}
	s := args.New(Name)
	s.NonEmpty(&a.Lead, "lead", DefaultLead, "name of the lead's task (one pod)")
	s.NonEmpty(&a.Worker, "worker", DefaultWorker, "name of the workers' task")
	s.Port(&a.Port, "port", DefaultPort, "the lead's port")
	a.Wait.AddFlags(s)
	s.Parse(argv)
	if job == nil {
		return a, s.Errors()
	}
	s.Task(job, "lead", a.Lead, true, 1)
	s.Task(job, "worker", a.Worker, true, 0)
	return a, s.Errors()
}

// describe: the workers wait for the lead's port; the lead's completion ends
// the Job.
func describe(a *Args, job *batch.Job) framework.Description {
	var d framework.Description
	d.AddRoles(job, framework.Role{Name: "lead", Task: a.Lead}, framework.Role{Name: "worker", Task: a.Worker})
	if a.Wait.Enabled {
		d.AddWaits(job, a.Lead, a.Port, true, a.Worker)
	}
	if jobs.Present(job, a.Lead) {
		d.Completion = a.Lead
	}
	return d
}

type plan struct {
	lead, worker, address string
	port                  int
	waiters               framework.Waiters
}

func buildPlan(argv []string, job *batch.Job) (*plan, field.ErrorList) {
	a, errs := ParseArgs(argv, job)
	if len(errs) > 0 {
		return nil, errs
	}
	lead, _ := jobs.Task(job, a.Lead)
	return &plan{
		lead: a.Lead, worker: a.Worker, port: a.Port,
		address: jobs.Host(job, lead, 0) + ":" + strconv.Itoa(a.Port),
		waiters: framework.NewWaiters(job, describe(a, job).Waits, a.Wait),
	}, nil
}

// Plugin is the ninth framework's Volcano plugin.
type Plugin struct{ framework.Base[*plan] }

// OnPodCreate sets EnvLead on the pods of both tasks, declares the port on
// the lead's and adds the wait container to the workers'.
func (p *Plugin) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	pl, ok := p.Plan(job)
	if !ok {
		return nil
	}
	task := jobs.PodTask(pod)
	if task != pl.lead && task != pl.worker {
		return nil
	}
	index, err := jobs.PodIndex(pod)
	if err != nil {
		return err
	}
	inject.Env(pod, v1.EnvVar{Name: EnvLead, Value: pl.address})
	if task == pl.lead {
		inject.Port(pod, "ninth", int32(pl.port))
	}
	pl.waiters.AddTo(pod, task, index)
	return nil
}

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// Framework is the ninth framework, as a package under plugins/ would
// export it.
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin)

// Sample is the ninth framework's Sample, as its sample package would
// export it.
var Sample = sample.Sample{
	Roles:       []sample.Role{{Flag: "lead", Single: true, Replicas: 1, Small: 1}, {Flag: "worker", Replicas: 3, Small: 2}},
	ValueFlags:  []string{"port", "wait-timeout"},
	StringFlags: []string{"wait-image"},
	BoolFlags:   []string{"wait"},
	ValidArgs:   []string{"--port=7000", "--wait-timeout=5m"},
	BadValues:   []string{"--lead=", "--port=lead"},
	Required:    [][]string{{"lead"}, {"worker"}},
	Wait:        [2]string{"worker", "lead"},
	Worker:      "worker",
	Lead:        []string{"lead"},
	Check:       check,
	Install:     sample.Install{Env: EnvLead},
	Training:    []training.Example{Example},
	Hellos:      []training.Hello{Hello},
}

// Example is the ninth framework's example that runs for real, as its sample
// package would list it. It borrows the Job, program and judge of pytorch's
// DDP example: it is never run, only listed, and a file of example/ lets
// the tools that list it load it.
var Example = training.Example{
	Framework: Name, What: "the ninth framework's training (pytorch's DDP Job)",
	File: "example/pytorch/pytorch-digits-ddp.yaml", ConfigMap: "pytorch-digits",
	Programs: []string{"example/pytorch/train_digits.py"}, Container: "pytorch",
	Judge: training.JudgeDigits(3, 3, false), Joined: training.Joined{Line: training.DigitsJoinedLine},
}

// Hello is the ninth framework's hello, pytorch's minimal Job borrowed the
// same way.
var Hello = training.Hello{
	Source: "example/pytorch/pytorch.yaml", Name: "pytorch-dist", Container: "pytorch",
	Success: regexp.MustCompile(`(?m)^rank [0-2]: OK`), Tasks: []string{"master", "worker"}, PerPod: 1,
}

// check wants EnvLead on every pod: the lead pod 0's host and the port.
func check(c sample.Pod) error {
	a, errs := ParseArgs(c.Job.Spec.Plugins[Name], c.Job)
	if len(errs) > 0 {
		return errs.ToAggregate()
	}
	lead, _ := jobs.Task(c.Job, a.Lead)
	return sample.WantEnv(c.Env, EnvLead, c.Host(lead, 0)+":"+strconv.Itoa(a.Port))
}

// Register adds Framework to catalog.Frameworks and Sample to
// samples.Samples until t ends: the two lines a ninth framework's packages
// would add. Tests that call it must not run in parallel with others of
// their package.
func Register(t testing.TB) {
	t.Helper()
	savedFrameworks, savedSamples := catalog.Frameworks, samples.Samples
	catalog.Frameworks = append(slices.Clone(savedFrameworks), &Framework)
	samples.Samples = maps.Clone(savedSamples)
	samples.Samples[Name] = &Sample
	t.Cleanup(func() { catalog.Frameworks, samples.Samples = savedFrameworks, savedSamples })
}

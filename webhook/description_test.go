package webhook

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
	"github.com/vcplugins/framework-plugins/plugins/catalog/ninthtest"
)

// noopPlugin is a plugin whose hooks do nothing.
type noopPlugin struct{}

func (noopPlugin) Name() string                          { return "fifth" }
func (noopPlugin) OnPodCreate(*v1.Pod, *batch.Job) error { return nil }
func (noopPlugin) OnJobAdd(*batch.Job) error             { return nil }
func (noopPlugin) OnJobDelete(*batch.Job) error          { return nil }
func (noopPlugin) OnJobUpdate(*batch.Job) error          { return nil }

// withFramework adds f to the catalog, and so to the frameworks the webhook
// handles, for one test.
func withFramework(t *testing.T, f *framework.Framework) {
	saved := catalog.Frameworks
	catalog.Frameworks = append(slices.Clone(saved), f)
	t.Cleanup(func() { catalog.Frameworks = saved })
}

// The webhook knows a framework only by its description: a fifth framework
// gets the defaults and checks from its roles, wait edge and completing task,
// with no code in the webhook naming it.
func TestFifthFrameworkFromItsDescription(t *testing.T) {
	build := func(pluginsinterface.PluginClientset, []string) pluginsinterface.PluginInterface { return noopPlugin{} }
	withFramework(t, &framework.Framework{
		Name: "fifth", New: build, NewUncached: build,
		Describe: func(argv []string, job *batch.Job) framework.Description {
			if len(argv) > 0 {
				return framework.Description{Errs: field.ErrorList{field.Invalid(field.NewPath("spec", "plugins").Key("fifth"), argv[0], "plugin fifth: no arguments")}}
			}
			var d framework.Description
			d.AddRoles(job, framework.Role{Name: "coordinator", Task: "coord"}, framework.Role{Name: "trainer", Task: "trainer"})
			d.AddWaits(job, "coord", 7000, false, "trainer")
			d.Completion = "trainer"
			return d
		},
		VolcanoPlugins: []string{framework.SvcPlugin, framework.SSHPlugin},
	})

	job := mkJob("five").
		Task(jobtest.MakeTask("coord", 1).RestartPolicy("").Obj()).
		Task(jobtest.MakeTask("trainer", 2).RestartPolicy("").Obj()).
		Plugin("fifth").Obj()
	got, _ := MutateJob(job, Options{})
	want := mkJob("five").
		Task(jobtest.MakeTask("coord", 1).RestartPolicy(v1.RestartPolicyOnFailure).Obj()).
		Task(jobtest.MakeTask("trainer", 2).RestartPolicy(v1.RestartPolicyOnFailure).Policy(taskCompleted, completeJob).Policy(podFailed, terminateJob).Obj()).
		Plugin("fifth").Plugin("svc").Plugin("ssh").Obj()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MutateJob (-want +got):\n%s", diff)
	}

	cyclic := mkJob("five").
		Task(jobtest.MakeTask("coord", 1).DependsOn("trainer").Obj()).
		Task(jobtest.MakeTask("trainer", 2).Obj()).
		Plugin("fifth").Obj()
	checkContains(t, ValidateJob(cyclic), []string{
		`spec.tasks[0].dependsOn.name[0]: Invalid value: "coord -> trainer -> coord": plugin fifth: launch-order cycle: coord waits for trainer (dependsOn), trainer waits for coord (fifth --wait); the pods would wait for each other forever`,
	})

	bad := mkJob("five").Task(jobtest.MakeTask("trainer", 2).Obj()).Plugin("fifth", "--x").Obj()
	if diff := cmp.Diff([]string{`spec.plugins[fifth]: Invalid value: "--x": plugin fifth: no arguments`}, errorStrings(ValidateJob(bad))); diff != "" {
		t.Errorf("ValidateJob of bad arguments (-want +got):\n%s", diff)
	}
}

// A ninth framework registered in the catalog alone (ninthtest.Register,
// which the controller's test registers the same way) reaches the
// admission: its name is in the webhook configurations' match conditions,
// the mutation gives its Job the defaults its description asks for, and the
// validation runs its ParseArgs.
func TestNinthFrameworkReachesTheAdmission(t *testing.T) {
	ninthtest.Register(t)
	if expr := FrameworksExpression(); !strings.Contains(expr, `"`+ninthtest.Name+`"`) {
		t.Errorf("FrameworksExpression() = %s, without %s", expr, ninthtest.Name)
	}
	job := mkJob("nine").
		Task(jobtest.MakeTask("lead", 1).RestartPolicy("").Obj()).
		Task(jobtest.MakeTask("worker", 2).RestartPolicy("").Obj()).
		Plugin(ninthtest.Name).Obj()
	got, _ := MutateJob(job, Options{})
	want := mkJob("nine").
		Task(jobtest.MakeTask("lead", 1).RestartPolicy(v1.RestartPolicyOnFailure).Policy(taskCompleted, completeJob).Obj()).
		Task(jobtest.MakeTask("worker", 2).RestartPolicy(v1.RestartPolicyOnFailure).Policy(podFailed, terminateJob).Obj()).
		Plugin(ninthtest.Name).Plugin("svc").Obj()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MutateJob (-want +got):\n%s", diff)
	}
	if errs := ValidateJob(got); len(errs) > 0 {
		t.Errorf("ValidateJob of the mutated Job: %v", errs)
	}
	bad := mkJob("nine").
		Task(jobtest.MakeTask("lead", 2).Obj()).
		Task(jobtest.MakeTask("worker", 2).Obj()).
		Plugin(ninthtest.Name, "--port=lead").Obj()
	checkContains(t, ValidateJob(bad), []string{
		`spec.plugins[ninth][0]: Invalid value: "--port=lead": plugin ninth: --port=lead: must be an integer`,
		`spec.plugins[ninth]: Invalid value: "--lead=lead (default)": plugin ninth: task "lead" (--lead) must have at most 1 replica, has 2`,
	})
}

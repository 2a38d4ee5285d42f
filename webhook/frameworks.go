package webhook

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/plugins"
)

// Volcano plugins the webhook itself reads about: svc's host lists are
// checked against the limits (checkSvc).
const svcPlugin = framework.SvcPlugin

// frameworks returns the framework plugins in the order the webhook examines
// a Job's plugins (plugins.ByName). It reads the catalog on every call, so
// that a framework a test adds to it is handled like the others; sorting
// eight names costs nothing beside a review.
func frameworks() []*framework.Framework { return plugins.ByName() }

// UsesFrameworks reports whether the Job uses one of the framework plugins
// (plugins.Frameworks).
func UsesFrameworks(job *batch.Job) bool {
	return firstFramework(job) != nil
}

// firstFramework returns the first framework, in name order (frameworks),
// that the Job uses, or nil.
func firstFramework(job *batch.Job) *framework.Framework {
	for _, f := range frameworks() {
		if _, ok := job.Spec.Plugins[f.Name]; ok {
			return f
		}
	}
	return nil
}

// edge is a launch-order dependency: the pods of task from wait for task to.
type edge struct {
	from, to string
	// how says what imposes it, for messages: "tensorflow --wait", "dependsOn".
	how string
	// path is the field that creates it.
	path *field.Path
}

// use is one framework plugin of a Job, as the framework describes it.
type use struct {
	framework.Description
	fw *framework.Framework
	// argv are the plugin's arguments.
	argv []string
}

// name is the plugin's name.
func (u *use) name() string { return u.fw.Name }

// waits returns the launch-order edges between tasks that the plugin's wait
// containers impose. A task whose pods wait for its own pod 0 (pytorch
// without a master task) depends on no other task: it is left out.
func (u *use) waits() []edge {
	var out []edge
	for _, w := range u.Waits {
		if w.From == w.To {
			continue
		}
		out = append(out, edge{from: w.From, to: w.To, how: u.name() + " --wait",
			path: field.NewPath("spec", "plugins").Key(u.name())})
	}
	return out
}

// analyze describes every framework plugin the Job uses, in name
// order (frameworks). It reads the Job and never changes it.
func analyze(job *batch.Job) []use {
	var out []use
	for _, f := range frameworks() {
		argv, ok := job.Spec.Plugins[f.Name]
		if !ok {
			continue
		}
		out = append(out, use{Description: f.Describe(argv, job), fw: f, argv: argv})
	}
	return out
}

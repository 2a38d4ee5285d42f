package docs_test

import batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

// daskJob is the Job docs/plugins/dask.md reports errors against unless a
// problem needs other tasks: a scheduler, 2 workers and a client.
func daskJob(args ...string) *batch.Job {
	return mkJob("dk").Task(mkTask("scheduler", 1)).Task(mkTask("worker", 2)).Task(mkTask("client", 1)).Plugin("dask", args...).Obj()
}

// The samples of docs/plugins/dask.md, kept in their own file so that adding
// a framework adds a file here.
var daskSamples = map[string]sample{
	"dask-unknown-flag":     parsed("dask", daskJob("--prot=8786")),
	"dask-mxnet-flag":       parsed("dask", daskJob("--server=server")),
	"dask-not-a-flag":       parsed("dask", daskJob("scheduler")),
	"dask-no-value":         parsed("dask", daskJob("--port")),
	"dask-port-nan":         parsed("dask", daskJob("--port=tcp-comm")),
	"dask-port-range":       parsed("dask", daskJob("--scheduler=scheduler", "--port=87860")),
	"dask-empty-task":       parsed("dask", daskJob("--client=")),
	"dask-bad-bool":         parsed("dask", daskJob("--wait=maybe")),
	"dask-no-scheduler":     parsed("dask", mkJob("dk").Task(mkTask("worker", 2)).Task(mkTask("client", 1)).Plugin("dask").Obj()),
	"dask-named-scheduler":  parsed("dask", daskJob("--scheduler=sched")),
	"dask-two-schedulers":   parsed("dask", mkJob("dk").Task(mkTask("scheduler", 2)).Task(mkTask("worker", 2)).Task(mkTask("client", 1)).Plugin("dask").Obj()),
	"dask-no-worker":        parsed("dask", mkJob("dk").Task(mkTask("scheduler", 1)).Task(mkTask("client", 1)).Plugin("dask").Obj()),
	"dask-worker-zero":      parsed("dask", mkJob("dk").Task(mkTask("scheduler", 1)).Task(mkTask("dask-worker", 0)).Task(mkTask("client", 1)).Plugin("dask", "--worker=dask-worker").Obj()),
	"dask-no-client":        parsed("dask", mkJob("dk").Task(mkTask("scheduler", 1)).Task(mkTask("worker", 2)).Plugin("dask").Obj()),
	"dask-two-clients":      parsed("dask", mkJob("dk").Task(mkTask("scheduler", 1)).Task(mkTask("worker", 2)).Task(mkTask("client", 2)).Plugin("dask").Obj()),
	"dask-two-roles":        parsed("dask", daskJob("--client=scheduler")),
	"dask-several":          parsed("dask", mkJob("dk").Task(mkTask("scheduler", 2)).Plugin("dask", "--port=0", "--client=runner").Obj()),
	"dask-cycle-dependson":  deniedCorpus("cycle-dask-dependson.yaml"),
	"dask-no-client-denied": deniedCorpus("dask-no-client.yaml"),
}

func init() {
	for k, s := range daskSamples {
		if _, dup := samples[k]; dup {
			panic("two samples named " + k)
		}
		samples[k] = s
	}
}

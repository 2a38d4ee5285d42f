package dasksample

import (
	"regexp"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/dask"
)

// distributed 2022.12 logs "Scheduler at: tcp://..." once the scheduler
// listens and a worker's "Registered to: tcp://..."; dask_digits.py's client
// prints "client: connected to the scheduler at ...".
var (
	daskSchedulerAt = regexp.MustCompile(`Scheduler at:\s+\S+$`)
	daskJoined      = regexp.MustCompile(`(?:^client: connected to the scheduler at |Registered to:\s+\S+$|Scheduler at:\s+\S+$)`)
)

// trainingExamples fits the digits on two dask workers.
var trainingExamples = []training.Example{{
	Framework: dask.Name, What: "dask scheduler, 2 dask workers and a client, all from DASK_SCHEDULER_ADDRESS: the digits fitted on both workers",
	File: "example/dask/dask-digits.yaml", ConfigMap: "dask-digits",
	Programs: []string{"example/dask/dask_digits.py"}, Container: "dask",
	Judge: judgeDask, Joined: training.Joined{Line: daskJoined}, Listening: daskSchedulerAt,
}}

// hellos is example/dask/dask.yaml: the workers and the client connect to
// the scheduler.
var hellos = []training.Hello{{
	Source: "example/dask/dask.yaml", Name: "dask-dist", Container: "dask",
	Success: regexp.MustCompile(`(?m)^(scheduler: OK, 2 workers \(dask-dist-worker-0 dask-dist-worker-1\) and 1 client connected|(worker dask-dist-worker-[01]|client): OK, connected to the scheduler at tcp://dask-dist-scheduler-0\.dask-dist` + training.Qualified + `:8786)$`), Tasks: []string{"scheduler", "worker", "client"}, PerPod: 1,
}}

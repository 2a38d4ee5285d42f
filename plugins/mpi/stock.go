package mpi

import (
	"flag"
	"io"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// stockAdmits is Volcano's admission of mpi's arguments (admit_job.go's
// validateJobCreate, v1.14.1 and v1.15.1): the master task StockMaster
// reads must exist.
func stockAdmits(argv []string, job *batch.Job) bool {
	_, ok := jobs.Task(job, StockMaster(argv))
	return ok
}

// StockMaster is the master task Volcano's in-tree mpi plugin reads from
// argv (pkg/controllers/job/plugins/distributed-framework/mpi, NewInstance):
// Go's flag package with --master, --worker and --port, stopping at the first
// flag it does not define; "master" when --master comes after it or is unset.
// A test compares it with Volcano's own plugin.
func StockMaster(argv []string) string {
	fs := flag.NewFlagSet(Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	master := fs.String("master", "master", "")
	fs.String("worker", "worker", "")
	fs.Int("port", 22, "")
	_ = fs.Parse(argv) // what parsed before an error stands, as in Volcano
	return *master
}

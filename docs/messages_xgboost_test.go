package docs_test

import "github.com/vcplugins/framework-plugins/internal/jobtest"

// xgbJob is the job of docs/plugins/xgboost.md's validation errors: a master
// and two workers.
func xgbJob(args ...string) *jobtest.JobWrapper {
	return mkJob("xgb").Task(mkTask("master", 1)).Task(mkTask("worker", 2)).Plugin("xgboost", args...)
}

// The samples of docs/plugins/xgboost.md.
func init() {
	for k, s := range map[string]sample{
		"xgboost-unknown-flag":   parsed("xgboost", xgbJob("--workers=worker").Obj()),
		"xgboost-mxnet-flag":     parsed("xgboost", xgbJob("--scheduler=master").Obj()),
		"xgboost-not-a-flag":     parsed("xgboost", xgbJob("master").Obj()),
		"xgboost-no-value":       parsed("xgboost", xgbJob("--port").Obj()),
		"xgboost-port-name":      parsed("xgboost", xgbJob("--port=xgboostjob-port").Obj()),
		"xgboost-port-range":     parsed("xgboost", xgbJob("--master=master", "--port=65536").Obj()),
		"xgboost-empty-task":     parsed("xgboost", xgbJob("--worker=").Obj()),
		"xgboost-bad-bool":       parsed("xgboost", xgbJob("--wait=maybe").Obj()),
		"xgboost-no-master":      parsed("xgboost", mkJob("xgb").Task(mkTask("worker", 2)).Plugin("xgboost").Obj()),
		"xgboost-named-master":   parsed("xgboost", xgbJob("--master=tracker").Obj()),
		"xgboost-master-zero":    parsed("xgboost", mkJob("xgb").Task(mkTask("master", 0)).Task(mkTask("worker", 2)).Plugin("xgboost").Obj()),
		"xgboost-two-masters":    parsed("xgboost", mkJob("xgb").Task(mkTask("master", 2)).Task(mkTask("worker", 2)).Plugin("xgboost").Obj()),
		"xgboost-missing-worker": parsed("xgboost", xgbJob("--worker=trainer").Obj()),
		"xgboost-worker-zero":    parsed("xgboost", mkJob("xgb").Task(mkTask("master", 1)).Task(mkTask("worker", 0)).Plugin("xgboost", "--worker=worker").Obj()),
		"xgboost-two-roles":      parsed("xgboost", xgbJob("--worker=master").Obj()),
		"xgboost-several":        parsed("xgboost", mkJob("xgb").Task(mkTask("master", 3)).Plugin("xgboost", "--port=0", "--worker=trainer").Obj()),
		"xgboost-cycle":          deniedCorpus("cycle-xgboost-dependson.yaml"),
	} {
		if _, dup := samples[k]; dup {
			panic("two samples named " + k)
		}
		samples[k] = s
	}
}

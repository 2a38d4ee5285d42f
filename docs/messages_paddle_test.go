package docs_test

// docs/plugins/paddle.md's messages: the paddle plugin's parser on small Jobs.
// In a file of their own, added to samples before any test runs.
func init() {
	pdJob := func(args ...string) sample {
		return parsed("paddle", mkJob("pd").Task(mkTask("master", 1)).Task(mkTask("worker", 2)).Plugin("paddle", args...).Obj())
	}
	for k, s := range map[string]sample{
		"paddle-unknown-flag":  pdJob("--nnodes=3"),
		"paddle-misspelt-flag": pdJob("--prot=36543"),
		"paddle-port-nan":      pdJob("--port=master"),
		"paddle-port-range":    pdJob("--port=70000"),
		"paddle-empty-task":    pdJob("--worker="),
		"paddle-named-master":  pdJob("--master=ps"),
		"paddle-worker-zero":   parsed("paddle", mkJob("pd").Task(mkTask("master", 1)).Task(mkTask("trainer", 0)).Plugin("paddle", "--worker=trainer").Obj()),
		"paddle-no-role-task":  parsed("paddle", mkJob("pd").Task(mkTask("trainer", 2)).Plugin("paddle").Obj()),
		"paddle-two-roles":     pdJob("--master=worker"),
	} {
		if _, dup := samples[k]; dup {
			panic("two samples named " + k)
		}
		samples[k] = s
	}
}

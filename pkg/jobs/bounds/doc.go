// Package bounds holds the admission bounds on a Volcano Job: the limits on
// its dimensions, checked before anything walks them (bounds.go: Shape,
// Check, CheckReplicas, MaxReplicas, MaxPodTemplateBytes; readshape.go:
// ReadShape, the Shape of a review's JSON before it is decoded; template.go:
// the pod templates' lists and bytes), and the sizes Volcano's own svc and
// ssh plugins would write for a Job (svc.go: SvcSizes; ssh.go:
// SSHConfigBytes, CheckSSHConfig), against MaxArgStrlen (one environment
// string, argstrlen.go) and MaxSSHConfigBytes (the ssh plugin's Secret).
//
// Every admission denies a Job over them (webhook); a framework plugin
// (pkg/framework) and pkg/guard refuse one that reached the controller
// without admission, so that Volcano builds none of its pods. Errors are
// Kubernetes field errors naming the bound; a Job's roles and host names come
// from package jobs.
package bounds

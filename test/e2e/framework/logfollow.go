package framework

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/training"
)

// FollowLogs starts following the log of container in every pod of job that
// exists now or appears later (see training.FollowLogs). job is the Job as
// created.
func (f *Framework) FollowLogs(ctx context.Context, job *batch.Job, container string) *training.LogFollower {
	return training.FollowLogs(ctx, f.Kube, container, func(context.Context) []*corev1.Pod { return f.PodsOf(job) })
}

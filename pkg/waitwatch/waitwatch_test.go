package waitwatch

import (
	"context"
	"testing"
	"time"

	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcfake "volcano.sh/apis/pkg/client/clientset/versioned/fake"
	vcinformers "volcano.sh/apis/pkg/client/informers/externalversions"
	"volcano.sh/volcano/pkg/controllers/framework"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

const timedOutLog = "waiting for 1 of 2 dependencies: mpi-worker-1.mpi:22 (590s elapsed, timeout 600s)\n" +
	"timed out after 600s waiting for 1 of 2 dependencies: mpi-worker-1.mpi:22\n"

func mpiJob() *batch.Job {
	return jobtest.MakeJob("mpi").UID("job-uid").
		Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Obj()
}

// master returns the master pod of mpiJob owned by it, with restartPolicy p.
func master(p v1.RestartPolicy) *jobtest.PodWrapper {
	w := jobtest.MakePod(mpiJob(), "master", 0).Owner(mpiJob())
	w.Spec.RestartPolicy = p
	return w
}

// spoof returns a timed-out master pod of mpiJob (restartPolicy OnFailure)
// after edit.
func spoof(edit func(*jobtest.PodWrapper)) *v1.Pod {
	w := master(v1.RestartPolicyOnFailure).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true)
	edit(w)
	return w.Obj()
}

func TestHandle(t *testing.T) {
	const onFailure = "task master: pod mpi-master-0: timed out after 600s waiting for 1 of 2 dependencies: mpi-worker-1.mpi:22 (--wait-timeout); " +
		"the pod is failed (activeDeadlineSeconds) rather than restarted, and the Job's PodFailed policy applies"
	// The user's own Job in the namespace, whose pods could name mpiJob.
	other := jobtest.MakeJob("other").UID("other-uid").Obj()
	cases := map[string]struct {
		pod          *v1.Pod
		job          *batch.Job // the Job the pod's controller reference names; default mpiJob()
		noJob        bool       // no such Job
		wantEvents   []string
		wantDeadline *int64
	}{
		"timed out, restarted by OnFailure": {
			pod:          master(v1.RestartPolicyOnFailure).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj(),
			wantEvents:   []string{"Warning WaitTimedOut mpi: " + onFailure},
			wantDeadline: ptr.To(FailDeadlineSeconds),
		},
		"timed out, terminated, Always": {
			pod: master(v1.RestartPolicyAlways).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, false).Obj(),
			wantEvents: []string{"Warning WaitTimedOut mpi: task master: pod mpi-master-0: timed out after 600s waiting for 1 of 2 dependencies: mpi-worker-1.mpi:22 (--wait-timeout); " +
				"the pod is failed (activeDeadlineSeconds) rather than restarted, and the Job's PodFailed policy applies"},
			wantDeadline: ptr.To(FailDeadlineSeconds),
		},
		"a user's longer deadline is shortened": {
			pod: master(v1.RestartPolicyOnFailure).ActiveDeadlineSeconds(3600).
				InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj(),
			wantEvents:   []string{"Warning WaitTimedOut mpi: " + onFailure},
			wantDeadline: ptr.To(FailDeadlineSeconds),
		},
		"no termination message": {
			pod: master(v1.RestartPolicyOnFailure).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, "", true).Obj(),
			wantEvents: []string{"Warning WaitTimedOut mpi: task master: pod mpi-master-0: the wait container exited 124 (timed out) (--wait-timeout); " +
				"the pod is failed (activeDeadlineSeconds) rather than restarted, and the Job's PodFailed policy applies"},
			wantDeadline: ptr.To(FailDeadlineSeconds),
		},
		"Never: the kubelet fails the pod, the event says why": {
			pod: master(v1.RestartPolicyNever).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, false).Obj(),
			wantEvents: []string{"Warning WaitTimedOut mpi: task master: pod mpi-master-0: timed out after 600s waiting for 1 of 2 dependencies: mpi-worker-1.mpi:22 (--wait-timeout); " +
				"the pod fails (restartPolicy Never), and the Job's PodFailed policy applies"},
		},
		"other exit status": {
			pod: master(v1.RestartPolicyOnFailure).InitTerminated(wait.ContainerName, 1, "boom", true).Obj(),
		},
		"another init container timed out": {
			pod: master(v1.RestartPolicyOnFailure).InitTerminated("user-init", wait.TimeoutExitCode, "", true).Obj(),
		},
		"already failing": {
			pod: master(v1.RestartPolicyOnFailure).ActiveDeadlineSeconds(FailDeadlineSeconds).
				InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj(),
			wantDeadline: ptr.To(FailDeadlineSeconds),
		},
		"already failed": {
			pod: master(v1.RestartPolicyOnFailure).Phase(v1.PodFailed).
				InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj(),
		},
		"not a Volcano Job's pod": {
			pod: jobtest.MakePod(mpiJob(), "master", 0).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj(),
		},
		// Pods a user made to look like the Job's: none posts an event on the
		// Job or has its deadline changed.
		"spoofed: the Job's name, another UID": {
			pod: spoof(func(p *jobtest.PodWrapper) { p.OwnerReferences[0].UID = "made-up" }),
		},
		"spoofed: the Job's name and UID, no job-name label": {
			pod: spoof(func(p *jobtest.PodWrapper) { delete(p.Labels, batch.JobNameKey) }),
		},
		"spoofed: another Job's pod labelled with the Job's name": {
			pod: spoof(func(p *jobtest.PodWrapper) { p.Owner(other) }),
			job: other,
		},
		"spoofed: owner reference to a Job that does not exist": {
			pod:   master(v1.RestartPolicyOnFailure).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj(),
			noJob: true,
		},
		"spoofed: the Job's reference in another namespace": {
			pod: spoof(func(p *jobtest.PodWrapper) { p.Namespace = "elsewhere" }),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			client := fake.NewSimpleClientset(tc.pod.DeepCopy())
			job := tc.job
			if job == nil && !tc.noJob {
				job = mpiJob()
			}
			timeouts := testutil.ToFloat64(metrics.WaitTimeouts)
			if err := Handle(context.Background(), client, job, tc.pod); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			// Every pod acted on is one timed-out wait, each with one event.
			if got, want := testutil.ToFloat64(metrics.WaitTimeouts)-timeouts, float64(len(tc.wantEvents)); got != want {
				t.Errorf("%s moved by %v, want %v", "framework_plugins_wait_timeouts_total", got, want)
			}
			var got []string
			for _, ev := range jobtest.Events(t, client) {
				if ev.InvolvedObject.UID != "job-uid" || ev.InvolvedObject.Kind != "Job" {
					t.Errorf("event on %+v, want the Job", ev.InvolvedObject)
				}
				got = append(got, ev.Type+" "+ev.Reason+" "+ev.InvolvedObject.Name+": "+ev.Message)
			}
			if diff := cmp.Diff(tc.wantEvents, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			pod, err := client.CoreV1().Pods(tc.pod.Namespace).Get(context.Background(), tc.pod.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.wantDeadline
			if want == nil {
				want = tc.pod.Spec.ActiveDeadlineSeconds
			}
			if diff := cmp.Diff(want, pod.Spec.ActiveDeadlineSeconds); diff != "" {
				t.Errorf("activeDeadlineSeconds (-want +got):\n%s", diff)
			}
		})
	}
	if events.ReasonWaitTimedOut != "WaitTimedOut" {
		t.Errorf("reason %q: docs and alerts match on WaitTimedOut", events.ReasonWaitTimedOut)
	}
}

// TestController runs the controller on a shared informer, as
// vc-controller-manager does: a pod whose wait times out gets failed.
func TestController(t *testing.T) {
	// volcano.sh/apis v1.14.0's informers (which the v1.15.1 line builds
	// with: lines/volcano-apis.sh) do not pass on a fake clientset's lack of
	// WatchList support, so client-go v0.35 would wait on the fake for the
	// initial-events bookmark it never sends. The real API server sends it.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	vcClient := vcfake.NewSimpleClientset(mpiJob())
	vcFactory := vcinformers.NewSharedInformerFactory(vcClient, 0)
	c := &Controller{}
	if err := c.Initialize(&framework.ControllerOption{KubeClient: client, SharedInformerFactory: factory, VCSharedInformerFactory: vcFactory}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go c.Run(stop)

	// A user's pod naming the Job, with a made-up UID, times out first.
	ctx := context.Background()
	spoofed := spoof(func(p *jobtest.PodWrapper) { p.Name = "spoofed"; p.OwnerReferences[0].UID = "made-up" })
	if _, err := client.CoreV1().Pods("default").Create(ctx, spoofed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := master(v1.RestartPolicyOnFailure).Obj()
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod = master(v1.RestartPolicyOnFailure).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj()
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	failed := func(name string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d := got.Spec.ActiveDeadlineSeconds; d != nil && *d == FailDeadlineSeconds {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the controller did not fail pod %s within 10s", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	failed(pod.Name)
	// A worker that times out now is queued after the spoofed pod (one
	// worker, first in first out): once it is failed, the spoofed pod has
	// been handled.
	worker := jobtest.MakePod(mpiJob(), "worker", 0).Owner(mpiJob()).
		InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj()
	worker.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	if _, err := client.CoreV1().Pods("default").Create(ctx, worker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	failed(worker.Name)
	if n := len(jobtest.Events(t, client)); n != 2 {
		t.Errorf("%d events, want 2 (the Job's own pods')", n)
	}
	if got, err := client.CoreV1().Pods("default").Get(ctx, spoofed.Name, metav1.GetOptions{}); err != nil || got.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("spoofed pod: err %v, activeDeadlineSeconds %v; want it untouched", err, got.Spec.ActiveDeadlineSeconds)
	}
}

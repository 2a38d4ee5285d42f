package waitwatch

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	"volcano.sh/volcano/pkg/controllers/framework"

	"github.com/vcplugins/framework-plugins/pkg/events"
	utiltesting "github.com/vcplugins/framework-plugins/pkg/testing"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

const timedOutLog = "waiting for 1 of 2 dependencies: mpi-worker-1.mpi:22 (590s elapsed, timeout 600s)\n" +
	"timed out after 600s waiting for 1 of 2 dependencies: mpi-worker-1.mpi:22\n"

func mpiJob() *batch.Job {
	return utiltesting.MakeJob("mpi").UID("job-uid").
		Task(utiltesting.MakeTask("master", 1).Obj()).Task(utiltesting.MakeTask("worker", 2).Obj()).Obj()
}

// master returns the master pod of mpiJob owned by it, with restartPolicy p.
func master(p v1.RestartPolicy) *utiltesting.PodWrapper {
	w := utiltesting.MakePod(mpiJob(), "master", 0).Owner(mpiJob())
	w.Spec.RestartPolicy = p
	return w
}

func TestHandle(t *testing.T) {
	const onFailure = "task master: pod mpi-master-0: timed out after 600s waiting for 1 of 2 dependencies: mpi-worker-1.mpi:22 (--wait-timeout); " +
		"the pod is failed (activeDeadlineSeconds) rather than restarted, and the Job's PodFailed policy applies"
	cases := map[string]struct {
		pod          *v1.Pod
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
			pod: utiltesting.MakePod(mpiJob(), "master", 0).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			client := fake.NewSimpleClientset(tc.pod.DeepCopy())
			if err := Handle(context.Background(), client, tc.pod); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			var got []string
			for _, ev := range utiltesting.Events(t, client) {
				if ev.InvolvedObject.UID != "job-uid" || ev.InvolvedObject.Kind != "Job" {
					t.Errorf("event on %+v, want the Job", ev.InvolvedObject)
				}
				got = append(got, ev.Type+" "+ev.Reason+" "+ev.InvolvedObject.Name+": "+ev.Message)
			}
			if diff := cmp.Diff(tc.wantEvents, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			pod, err := client.CoreV1().Pods("default").Get(context.Background(), tc.pod.Name, metav1.GetOptions{})
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
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	c := &Controller{}
	if err := c.Initialize(&framework.ControllerOption{KubeClient: client, SharedInformerFactory: factory}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go c.Run(stop)

	pod := master(v1.RestartPolicyOnFailure).Obj()
	ctx := context.Background()
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod = master(v1.RestartPolicyOnFailure).InitTerminated(wait.ContainerName, wait.TimeoutExitCode, timedOutLog, true).Obj()
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := got.Spec.ActiveDeadlineSeconds; d != nil && *d == FailDeadlineSeconds {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the controller did not fail the pod within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(utiltesting.Events(t, client)); n != 1 {
		t.Errorf("%d events, want 1", n)
	}
}

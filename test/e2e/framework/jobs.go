package framework

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	scheduling "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
)

// Path resolves a path relative to the module root (e.g. "example/mpi/mpi.yaml"
// or "test/e2e/testdata/x.yaml"); absolute paths are returned as they are.
func Path(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	root, err := localcluster.ModuleRoot()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return filepath.Join(root, rel)
}

// LoadJob reads a Volcano Job from a YAML file (path as for Path), strictly:
// an unknown field fails the spec, as it would be a typo in the test data.
func LoadJob(path string) *batch.Job {
	job, err := training.LoadJob("", Path(path))
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "%s is not a Volcano Job", path)
	return job
}

// KeepRunning annotates every task's pod template so that the KWOK nodes keep
// its pods Running instead of completing them (localcluster's
// localcluster.vcplugins.io/result=Running); a completed Job's plugins delete
// the objects they own (Volcano calls their OnJobDelete), so specs that look
// at those objects keep the Job running. It returns job.
func KeepRunning(job *batch.Job) *batch.Job {
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i].Template
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		t.Annotations[localcluster.AnnotationPodResult] = "Running"
	}
	return job
}

// prepare returns a copy of job ready for Create in the spec's namespace:
// namespace set, server-set fields (UID, resourceVersion, status) cleared, as
// the internal/jobtest builders fill them for unit tests.
func (f *Framework) prepare(job *batch.Job) *batch.Job {
	j := job.DeepCopy()
	j.Namespace = f.Namespace
	j.UID = ""
	j.ResourceVersion = ""
	j.Status = batch.JobStatus{}
	return j
}

// TryCreateJob creates the Job in the spec's namespace and returns the API
// server's answer: the Job as admitted (mutations applied) or the error.
func (f *Framework) TryCreateJob(ctx context.Context, job *batch.Job) (*batch.Job, error) {
	return f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Create(ctx, f.prepare(job), metav1.CreateOptions{})
}

// DryRunJob sends the Job to the API server with dryRun=All and returns it as
// it would be admitted (the webhooks' mutations applied), failing the spec on
// error. Nothing is stored.
func (f *Framework) DryRunJob(ctx context.Context, job *batch.Job) *batch.Job {
	admitted, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Create(ctx, f.prepare(job), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "dry-run creating Job %s", job.Name)
	return admitted
}

// CreateJob creates the Job in the spec's namespace, failing the spec on error,
// and returns it as admitted.
func (f *Framework) CreateJob(ctx context.Context, job *batch.Job) *batch.Job {
	created, err := f.TryCreateJob(ctx, job)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "creating Job %s", job.Name)
	return created
}

// CreateJobs creates the Jobs concurrently (one request each) and returns them
// as admitted, in order.
func (f *Framework) CreateJobs(ctx context.Context, jobs ...*batch.Job) []*batch.Job {
	out := make([]*batch.Job, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out[i], errs[i] = f.TryCreateJob(ctx, jobs[i])
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "creating Job %s", jobs[i].Name)
	}
	return out
}

// WarningRecorder collects the warnings the API server returns, as a
// rest.WarningHandler of a client or of one request.
type WarningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *WarningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

// Warnings returns the warnings recorded so far, in the order they came.
func (w *WarningRecorder) Warnings() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.warnings...)
}

// CreateJobWithWarnings creates the Job through a client of its own and also
// returns the warnings of the API server's answer (admission webhooks' warnings
// among them).
func (f *Framework) CreateJobWithWarnings(ctx context.Context, job *batch.Job) (*batch.Job, []string, error) {
	return f.createJobWithWarnings(ctx, job, metav1.CreateOptions{})
}

// DryRunJobWithWarnings is CreateJobWithWarnings with dryRun=All: the
// admissions answer, nothing is stored.
func (f *Framework) DryRunJobWithWarnings(ctx context.Context, job *batch.Job) (*batch.Job, []string, error) {
	return f.createJobWithWarnings(ctx, job, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
}

func (f *Framework) createJobWithWarnings(ctx context.Context, job *batch.Job, opts metav1.CreateOptions) (*batch.Job, []string, error) {
	rec := &WarningRecorder{}
	cfg := rest.CopyConfig(f.RESTConfig)
	cfg.WarningHandler = rec
	vc, err := vcclientset.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	created, err := vc.BatchV1alpha1().Jobs(f.Namespace).Create(ctx, f.prepare(job), opts)
	return created, rec.Warnings(), err
}

// GetJob returns the Job of that name in the spec's namespace.
func (f *Framework) GetJob(ctx context.Context, name string) (*batch.Job, error) {
	return f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Get(ctx, name, metav1.GetOptions{})
}

// JobPhase returns the Job's phase ("" if it cannot be read).
func (f *Framework) JobPhase(ctx context.Context, job *batch.Job) batch.JobPhase {
	j, err := f.GetJob(ctx, job.Name)
	if err != nil {
		return ""
	}
	return j.Status.State.Phase
}

// WaitJobPhase waits up to timeout (a named timeout, JobCompletedTimeout for
// Completed) until the Job is in phase.
func (f *Framework) WaitJobPhase(ctx context.Context, job *batch.Job, phase batch.JobPhase, timeout time.Duration) {
	Eventually(ctx, func(ctx context.Context) (batch.JobStatus, error) {
		j, err := f.GetJob(ctx, job.Name)
		if err != nil {
			return batch.JobStatus{}, err
		}
		return j.Status, nil
	}, timeout).Should(gomega.HaveField("State.Phase", phase), "phase of Job %s", job.Name)
}

// DeleteJob deletes the Job with the given propagation policy.
func (f *Framework) DeleteJob(ctx context.Context, job *batch.Job, propagation metav1.DeletionPropagation) {
	err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: &propagation})
	if err != nil && !apierrors.IsNotFound(err) {
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "deleting Job %s", job.Name)
	}
}

// DeleteJobAndPods deletes the Job and then its pods, without waiting for the
// garbage collector: it only collects a Volcano Job's dependents once its API
// discovery (re-read every 30 seconds) lists the Job CRD, which may be after
// the first specs of a fresh cluster have run. Specs that free the cluster's
// GPUs for the next one clean up with it.
func (f *Framework) DeleteJobAndPods(ctx context.Context, job *batch.Job) {
	f.DeleteJob(ctx, job, metav1.DeletePropagationBackground)
	err := f.Kube.CoreV1().Pods(f.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: batch.JobNameKey + "=" + job.Name})
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "deleting the pods of Job %s", job.Name)
}

// PodGroupName is the name Volcano's job controller gives a Job's PodGroup.
func PodGroupName(job *batch.Job) string { return job.Name + "-" + string(job.UID) }

// PodGroupOf returns the Job's PodGroup. job must be as admitted (its UID set).
func (f *Framework) PodGroupOf(ctx context.Context, job *batch.Job) (*scheduling.PodGroup, error) {
	return f.Volcano.SchedulingV1beta1().PodGroups(f.Namespace).Get(ctx, PodGroupName(job), metav1.GetOptions{})
}

// PodGroupPhase returns the phase of the Job's PodGroup ("" if it cannot be read).
func (f *Framework) PodGroupPhase(ctx context.Context, job *batch.Job) scheduling.PodGroupPhase {
	pg, err := f.PodGroupOf(ctx, job)
	if err != nil {
		return ""
	}
	return pg.Status.Phase
}

// ControllerRefTo is the ownerReference a Job's controlled objects carry.
func ControllerRefTo(job *batch.Job) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion:         batch.SchemeGroupVersion.String(),
		Kind:               "Job",
		Name:               job.Name,
		UID:                job.UID,
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}

// Volumes returns a pod's volumes by name.
func Volumes(pod *corev1.Pod) map[string]corev1.Volume {
	out := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		out[v.Name] = v
	}
	return out
}

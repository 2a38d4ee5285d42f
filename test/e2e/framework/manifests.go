package framework

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
)

// ExamplesDir holds one directory per framework with its example Jobs,
// relative to the module root.
const ExamplesDir = "example"

// ExampleFiles returns every *.yaml file under ExamplesDir, at any depth,
// relative to the module root and sorted.
func ExampleFiles() []string {
	root := Path("")
	var out []string
	err := filepath.WalkDir(Path(ExamplesDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			out = append(out, rel)
		}
		return nil
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "walking %s", ExamplesDir)
	sort.Strings(out)
	return out
}

// DocFiles returns README.md and every *.md file under docs/, at any depth,
// relative to the module root.
func DocFiles() []string {
	root := Path("")
	out := []string{"README.md"}
	err := filepath.WalkDir(Path("docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			out = append(out, rel)
		}
		return nil
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "walking docs")
	sort.Strings(out[1:])
	return out
}

// CodeBlock is a fenced code block of a Markdown file.
type CodeBlock struct {
	// Line is the 1-based line of the opening fence.
	Line int
	// Lang is the first word of the info string, lower-cased ("" if none).
	Lang string
	// Text is the content, without the fences and without the indentation of
	// the opening fence (blocks inside list items are indented).
	Text string
}

// openingFence matches a CommonMark code fence opening: three or more
// backticks or tildes, then the info string. Any indentation is accepted, so
// that fences inside list items are found.
var openingFence = regexp.MustCompile("^( *)(`{3,}|~{3,})\\s*([^`\\s]*)")

// CodeBlocks returns the fenced code blocks of a Markdown document, in order.
// A block ends at a line holding only a fence of the same character at least
// as long as the opening one, or at the end of the document (as in
// CommonMark).
func CodeBlocks(markdown []byte) []CodeBlock {
	lines := strings.Split(strings.ReplaceAll(string(markdown), "\r\n", "\n"), "\n")
	var out []CodeBlock
	for i := 0; i < len(lines); i++ {
		m := openingFence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence := len(m[1]), m[2]
		if fence[0] == '`' && strings.Contains(lines[i][len(m[0]):], "`") {
			continue // an inline code span, not a fence
		}
		b := CodeBlock{Line: i + 1, Lang: strings.ToLower(m[3])}
		var body []string
		for i++; i < len(lines); i++ {
			t := strings.TrimSpace(lines[i])
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				break
			}
			body = append(body, dedent(lines[i], indent))
		}
		b.Text = strings.Join(body, "\n")
		if len(body) > 0 {
			b.Text += "\n"
		}
		out = append(out, b)
	}
	return out
}

// dedent removes up to n leading spaces.
func dedent(line string, n int) string {
	for n > 0 && strings.HasPrefix(line, " ") {
		line, n = line[1:], n-1
	}
	return line
}

// IsVolcanoJob reports whether a YAML document is a Volcano Job (apiVersion
// batch.volcano.sh/v1alpha1, kind Job). Documents that do not parse are not.
func IsVolcanoJob(doc []byte) bool {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return false
	}
	return tm.APIVersion == batch.SchemeGroupVersion.String() && tm.Kind == "Job"
}

// DecodeJob decodes one YAML document into a Volcano Job strictly (an unknown
// field is an error, as it would be a typo); source names it in errors.
func DecodeJob(doc []byte, source string) (*batch.Job, error) {
	job := &batch.Job{}
	if err := yaml.UnmarshalStrict(doc, job); err != nil {
		return nil, fmt.Errorf("%s is not a valid Volcano Job: %w", source, err)
	}
	if job.APIVersion != batch.SchemeGroupVersion.String() || job.Kind != "Job" {
		return nil, fmt.Errorf("%s: apiVersion %q kind %q, want %s Job", source, job.APIVersion, job.Kind, batch.SchemeGroupVersion)
	}
	return job, nil
}

// SourcedJob is a Volcano Job and where it was found.
type SourcedJob struct {
	// Source is file:line of the document (the opening fence for Markdown).
	Source string
	Job    *batch.Job
}

// DocJobs returns every Volcano Job of the ```yaml (or ```yml) blocks of
// DocFiles, decoded strictly, in file and block order. Other documents of
// those blocks are left out.
func DocJobs() []SourcedJob {
	var out []SourcedJob
	for _, file := range DocFiles() {
		data, err := os.ReadFile(Path(file))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		for _, b := range CodeBlocks(data) {
			if b.Lang != "yaml" && b.Lang != "yml" {
				continue
			}
			docs, err := kubeutil.YAMLDocuments([]byte(b.Text))
			gomega.Expect(err).NotTo(gomega.HaveOccurred(), "%s:%d: yaml block", file, b.Line)
			for i, doc := range docs {
				if !IsVolcanoJob(doc) {
					continue
				}
				source := fmt.Sprintf("%s:%d", file, b.Line)
				if len(docs) > 1 {
					source += fmt.Sprintf(" (document %d)", i+1)
				}
				job, err := DecodeJob(doc, source)
				gomega.Expect(err).NotTo(gomega.HaveOccurred())
				out = append(out, SourcedJob{Source: source, Job: job})
			}
		}
	}
	return out
}

// JobGPUs returns the GPUs a Job's pods request in all, as the scheduler
// counts them (PodGPUs of each task's template, times its replicas).
func JobGPUs(job *batch.Job) int64 {
	var n int64
	for _, t := range job.Spec.Tasks {
		n += int64(t.Replicas) * PodGPUs(podOf(t))
	}
	return n
}

// podOf is a pod of the task, for PodGPUs.
func podOf(t batch.TaskSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: t.Template.ObjectMeta, Spec: t.Template.Spec}
}

// DryRunResult is the API server's answer to the server-side dry run of one object.
type DryRunResult struct {
	// Object is "<Kind> <namespace>/<name>" (no namespace for cluster-scoped ones).
	Object string
	// Existed is true when the object was already there: it was dry-run replaced.
	Existed bool
	Err     error
}

// ServerDryRun sends every object of the YAML documents to the API server with
// dryRun=All, as `kubectl create --dry-run=server` would, or as `kubectl
// replace --dry-run=server` for those that already exist (a create would only
// say AlreadyExists): the whole object goes through defaulting, validation and
// admission, and nothing is persisted, which it checks (an object that did not
// exist still does not, one that did keeps its resourceVersion). A namespaced object without a namespace
// is sent to namespace ns. Kinds the server does not serve fail their object.
func (f *Framework) ServerDryRun(ctx context.Context, data []byte, ns string) []DryRunResult {
	docs, err := kubeutil.YAMLDocuments(data)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	dc, err := discovery.NewDiscoveryClientForConfig(f.RESTConfig)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(f.RESTConfig)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())

	var out []DryRunResult
	for _, doc := range docs {
		obj := &unstructured.Unstructured{}
		gomega.Expect(yaml.Unmarshal(doc, &obj.Object)).To(gomega.Succeed(), "decoding:\n%s", doc)
		gvk := obj.GroupVersionKind()
		r := DryRunResult{Object: gvk.Kind + " " + obj.GetName()}
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			r.Err = err
			out = append(out, r)
			continue
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			if obj.GetNamespace() == "" {
				obj.SetNamespace(ns)
			}
			r.Object = gvk.Kind + " " + obj.GetNamespace() + "/" + obj.GetName()
			ri = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		r.Err = dryRunOne(ctx, ri, obj, &r.Existed)
		out = append(out, r)
	}
	return out
}

// dryRunOne creates obj with dryRun=All, or replaces it so if it exists
// (setting *existed), and then checks that nothing was persisted: an object
// that did not exist still does not, one that existed has its resourceVersion.
func dryRunOne(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, existed *bool) error {
	dryRun := []string{metav1.DryRunAll}
	_, err := ri.Create(ctx, obj, metav1.CreateOptions{DryRun: dryRun})
	if err == nil {
		if _, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the dry-run create persisted the object (get: %v)", err)
		}
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	*existed = true
	cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetResourceVersion(cur.GetResourceVersion())
	if _, err := ri.Update(ctx, obj, metav1.UpdateOptions{DryRun: dryRun}); err != nil {
		return err
	}
	after, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	if after.GetResourceVersion() != cur.GetResourceVersion() {
		return fmt.Errorf("the dry-run replace changed the object (resourceVersion %s, then %s)", cur.GetResourceVersion(), after.GetResourceVersion())
	}
	return nil
}

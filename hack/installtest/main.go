// Command installtest is `make test-install`: docs/install.md's procedure on
// the local cluster's real node, with Volcano itself installed by its own Helm
// chart from images built here (make images).
//
//  1. a cluster without Volcano (local-cluster up --no-volcano) and the real
//     node, the images of make images imported into its containerd;
//  2. Volcano with its chart (from the volcano module of the line's module
//     file: go.mod's v1.15.1, or lines/<line>.mod's with make LINE=<line>)
//     and the stock-built images; a TensorFlow Job with Volcano's in-tree
//     plugin;
//  3. the upgrade to this project as docs/install.md says, while a client
//     creates a Job once a second: prints the failed creates of its step 0
//     (Volcano's pods replaced by Volcano's), "failed creates during
//     upgrade: N" for steps 1-3, and the time those took;
//     After step 1 (our chart with its default values, Volcano still on its
//     own images) a plain Job and a framework Job must be created: the
//     chart's defaults must deny no Job create (issue #25);
//  4. a Job of each framework with this project's plugins, and
//     docs/install.md's Verify Job (needs make node-images-training); the
//     chart's policy refusing a ConfigMap that claims a Job's name and
//     control (dry run);
//     then the upgrade to a next release of ours (the same images tagged
//     <version>-next) and `helm rollback` to this one, each counted the same
//     way ("failed creates during upgrade to ...", "... rollback to ...");
//  5. the rollback and uninstall as documented, then the in-tree Job again,
//     a check that nothing of this project is left;
//  6. the same upgrade without Helm (docs/install.md, "Install without
//     Helm": kubectl apply and the installer/volcano-patches), counted the
//     same way ("failed creates during upgrade without Helm: N"), a
//     TensorFlow Job with our plugin, its uninstall and the check again;
//     then after the cluster is down the e2e suite's host check.
//
// Exit status 0 when every Job succeeded, every count of failed creates after
// step 0 is 0 and the host is as it
// was, 1 otherwise. Run it under
// flock /tmp/realnode.lock: it starts a real node.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/ownedcm"
	"github.com/vcplugins/framework-plugins/plugins/dask"
	"github.com/vcplugins/framework-plugins/plugins/jax"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
	"github.com/vcplugins/framework-plugins/plugins/paddle"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/plugins/xgboost"
	"github.com/vcplugins/framework-plugins/webhook"
)

type options struct {
	dir, binDir, imageDir, installImages, chart, version string
	// imagesTool pushes our images (hack/tools/images push); chartPackage is
	// our chart as `make chart-package` packs it.
	imagesTool, chartPackage string
	// values and patches are what differs per Volcano line (lines/README.md):
	// Volcano's chart values that swap in our images, and the directory of
	// the two kubectl patches that do it without Helm.
	values, patches string
	keep            bool
	// volcano is the volcano module's version, the release the chart installs.
	volcano string
}

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", "_output/install", "cluster root directory")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "component binaries (make binaries), helm among them")
	flag.StringVar(&o.imageDir, "image-dir", "_output/images", "the real node's images (pause, busybox)")
	flag.StringVar(&o.installImages, "install-images", "_output/install-images", "tarballs of make images")
	flag.StringVar(&o.chart, "volcano-chart", "", "Volcano's chart directory (default: installer/helm/chart/volcano of the volcano module)")
	flag.StringVar(&o.version, "version", "", "this project's image tag (the Makefile's VERSION)")
	flag.StringVar(&o.values, "volcano-values", "installer/helm/volcano-values.yaml", "the values of Volcano's chart that swap in our images (another line's: lines/<line>/volcano-values.yaml)")
	flag.StringVar(&o.patches, "volcano-patches", "installer/volcano-patches", "the directory of volcano-controllers.yaml and volcano-admission.yaml, the patches without Helm (another line's: lines/<line>/volcano-patches)")
	flag.StringVar(&o.imagesTool, "images-tool", "_output/bin/images", "hack/tools/images, which pushes our images to the cluster's registry")
	flag.StringVar(&o.chartPackage, "chart-package", "", "this project's chart as make chart-package packs it (_output/charts/framework-plugins-<version>.tgz; required)")
	flag.BoolVar(&o.keep, "keep", false, "leave the cluster running")
	flag.Parse()
	os.Exit(run(o))
}

// t is the install test's state: clients, helm and the report.
type t struct {
	o       options
	env     []string
	kube    kubernetes.Interface
	vc      vcclientset.Interface
	failed  []string
	results []string
	// containerd is the real node's containerd socket, where Volcano's own
	// images are imported.
	containerd string
	// registry is the cluster's registry (HOST:PORT) our images are pushed
	// to and pulled from; digests are theirs by image name (ourImages).
	registry string
	digests  map[string]string
	// componentTags: the line's Volcano chart has a tag value per component
	// (v1.15: controller_image_tag_version, ...), which pins by digest
	// ("<tag>@sha256:..."); v1.14's has image_tag_version only.
	componentTags bool
	// admissionGates: the line's chart passes custom.admission_feature_gates
	// to the webhook manager (v1.15), as real-node-values.yaml sets it.
	admissionGates bool
	// doc is docs/install.md's "Onto an existing Volcano" block: the steps
	// the Helm upgrade runs, as the user copies them; noHelm is its
	// "Install without Helm" block.
	doc, noHelm docSteps
}

func run(o options) (code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	root, err := localcluster.ModuleRoot()
	if err != nil {
		return fail(err)
	}
	if err := os.Chdir(root); err != nil {
		return fail(err)
	}
	// The module file's volcano.sh/volcano (go.mod, or a Volcano line's
	// -modfile in GOFLAGS): its chart, and the tag of the stock images
	// hack/tools/images built from it.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "volcano.sh/volcano").Output()
	if err != nil {
		return fail(fmt.Errorf("go list -m volcano.sh/volcano: %v", err))
	}
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	o.volcano = version
	if o.chart == "" {
		o.chart = filepath.Join(dir, "installer", "helm", "chart", "volcano")
	}
	heading("cluster without Volcano, with the real node")
	before := localcluster.TakeHostSnapshot(o.binDir)
	cl, err := localcluster.Up(ctx, localcluster.Config{
		RootDir: o.dir, BinDir: o.binDir, ImageDir: o.imageDir,
		Nodes: 1, NoVolcano: true, RealNode: localcluster.RealNodeOn, Registry: true,
		Timeout: 5 * time.Minute, Out: os.Stdout,
	})
	if err != nil {
		_ = localcluster.Down(o.dir)
		return fail(err)
	}
	if !o.keep {
		defer func() {
			heading("local-cluster down")
			if err := localcluster.Down(cl.RootDir); err != nil {
				fmt.Println("down:", err)
				code = 1
			}
			// Host hygiene, as the e2e suite checks it: the in-cluster
			// paths (the API server's address in the node's namespace, the
			// CONNECT proxy) must go with the cluster too.
			if changes := localcluster.HostChanges(before, localcluster.TakeHostSnapshot(o.binDir)); len(changes) > 0 {
				fmt.Printf("host check FAILED: the cluster left the host changed:\n  %s\n", strings.Join(changes, "\n  "))
				code = 1
			} else {
				fmt.Println("host check: no process, mount, network namespace, interface, cgroup, path or sysctl change left behind")
			}
		}()
	}
	// The variables docs/install.md's header sets, which its blocks use: the
	// cluster's registry, the line's chart version and Volcano's namespace.
	x := &t{o: o, env: append(os.Environ(), "KUBECONFIG="+cl.Kubeconfig, "REGISTRY="+cl.RegistryAddress(),
		"VOLCANO_VERSION="+strings.TrimPrefix(version, "v"), "VOLCANO_NAMESPACE=volcano-system"),
		containerd: cl.RealNode.ContainerdSocket, registry: cl.RegistryAddress(), digests: map[string]string{}}
	if x.kube, err = kubernetes.NewForConfig(cl.RESTConfig); err != nil {
		return fail(err)
	}
	// The typed client sends the tasks' empty template metadata as
	// "creationTimestamp": null, which the Job CRD's schema warns about on
	// every create; the log would be those warnings.
	vcConfig := rest.CopyConfig(cl.RESTConfig)
	vcConfig.WarningHandler = rest.NoWarnings{}
	if x.vc, err = vcclientset.NewForConfig(vcConfig); err != nil {
		return fail(err)
	}
	// Volcano's own images, as the user's cluster has them already: imported
	// into the node. Ours take the user's path: pushed to a registry, pulled
	// from it by the node's containerd, by digest.
	tars, _ := filepath.Glob(filepath.Join(o.installImages, "stock-*.tar"))
	if len(tars) == 0 {
		return fail(fmt.Errorf("no image tarballs of Volcano's in %s (make images)", o.installImages))
	}
	for _, f := range tars {
		if err := x.sh("ctr", "--address", x.containerd, "-n", "k8s.io", "images", "import", f); err != nil {
			return fail(err)
		}
	}
	if err := x.push(o.version, true); err != nil {
		return fail(err)
	}
	if x.componentTags, err = chartHasValue(o.chart, "controller_image_tag_version"); err != nil {
		return fail(err)
	}
	if x.admissionGates, err = chartHasValue(o.chart, "admission_feature_gates"); err != nil {
		return fail(err)
	}
	if x.doc, err = readDocSteps(installDoc, installHeading); err != nil {
		return fail(err)
	}
	if x.noHelm, err = readDocSteps(installDoc, noHelmHeading); err != nil {
		return fail(err)
	}
	if err := x.steps(ctx); err != nil {
		fmt.Println("FAILED:", err)
		x.failed = append(x.failed, err.Error())
		// What kept the step from finishing: the nodes' conditions and
		// taints (a node under disk pressure schedules nothing), every pod,
		// the recent events.
		heading("the cluster when the step failed")
		x.printKubectl([]string{"describe", "nodes"}, []string{"get", "pods", "-A", "-o", "wide"},
			[]string{"get", "events", "-A", "--sort-by=.lastTimestamp"})
	}
	heading("results")
	for _, r := range x.results {
		fmt.Println(r)
	}
	if len(x.failed) > 0 {
		fmt.Printf("install test FAILED: %s\n", strings.Join(x.failed, "; "))
		return 1
	}
	fmt.Println("install test passed")
	return 0
}

// helm runs the helm of --bin-dir with the cluster's kubeconfig.
func (x *t) helm(args ...string) error {
	return x.sh(filepath.Join(x.o.binDir, "helm"), args...)
}

// output runs a command, printing it, and returns its standard output.
func (x *t) output(name string, args ...string) ([]byte, error) {
	fmt.Printf("$ %s %s\n", filepath.Base(name), strings.Join(args, " "))
	cmd := exec.Command(name, args...)
	cmd.Env = x.env
	cmd.Stderr = os.Stdout
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), err)
	}
	return out, nil
}

// sh runs a command, printing it and its output.
func (x *t) sh(name string, args ...string) error {
	fmt.Printf("$ %s %s\n", filepath.Base(name), strings.Join(args, " "))
	cmd := exec.Command(name, args...)
	cmd.Env = x.env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), err)
	}
	return nil
}

// ourPath is where our images are under a registry, as make images names
// them and installer/helm/volcano-values.yaml expects:
// <registry>/<ourPath><name>:<version>.
const ourPath = "framework-plugins/"

// push is docs/install.md's "Images": our images (ourImages) pushed to the
// cluster's registry under tag, with `make images-push`' tool, each an
// image index of the platforms make images built. With record, the digests
// it prints (the indexes') are kept for pinning; the test fails if the
// registry does not serve an image index under the digest the tool printed,
// or one without an image for the node's platform, which the node's
// containerd then pulls and runs.
func (x *t) push(tag string, record bool) error {
	heading("push our images to the cluster's registry " + x.registry + " (tag " + tag + ")")
	out, err := x.output(x.o.imagesTool, "push", "--dir", x.o.installImages, "--only", strings.Join(ourImages(), ","),
		"--repo", x.registry+"/"+strings.TrimSuffix(ourPath, "/"), "--tag", tag)
	fmt.Print(string(out))
	if err != nil {
		return err
	}
	if !record {
		return nil
	}
	for _, name := range ourImages() {
		m := regexp.MustCompile(regexp.QuoteMeta(x.ref(name, tag)) + `@(sha256:[0-9a-f]{64})[ \n]`).FindSubmatch(out)
		if m == nil {
			return fmt.Errorf("images push printed no digest for %s", x.ref(name, tag))
		}
		x.digests[name] = string(m[1])
		// What the node will pull: the registry serves an index under
		// that digest, with an image for the node's platform.
		platforms, err := x.indexPlatforms(name, string(m[1]))
		if err != nil {
			return err
		}
		node := "linux/" + runtime.GOARCH
		if !slices.Contains(platforms, node) {
			return fmt.Errorf("the index %s@%s has no image for the node's platform %s (it has %s)", name, m[1], node, strings.Join(platforms, ", "))
		}
		fmt.Printf("%s@%s: an image index of %s; the node pulls and runs %s\n", name, m[1], strings.Join(platforms, ", "), node)
	}
	return nil
}

// indexPlatforms fetches the manifest the cluster's registry serves for our
// image name by digest and returns its platforms; it must be an image index
// (OCI, or Docker's manifest list).
func (x *t) indexPlatforms(name, digest string) ([]string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+x.registry+"/v2/"+ourPath+name+"/manifests/"+digest, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the registry answers HTTP %d for %s@%s", resp.StatusCode, name, digest)
	}
	var index struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Platform struct {
				OS           string `json:"os"`
				Architecture string `json:"architecture"`
			} `json:"platform"`
		} `json:"manifests"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&index); err != nil {
		return nil, fmt.Errorf("%s@%s: %w", name, digest, err)
	}
	if len(index.Manifests) == 0 {
		return nil, fmt.Errorf("the registry serves %s@%s as %q, not an image index", name, digest, index.MediaType)
	}
	var out []string
	for _, m := range index.Manifests {
		out = append(out, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	return out, nil
}

// ref is our image name under the cluster's registry with tag.
func (x *t) ref(name, tag string) string {
	return x.registry + "/" + ourPath + name + ":" + tag
}

// pinned is ref by digest as well: <registry>/<path><name>:<tag>@sha256:...,
// the form docs/install.md's "Pinning by digest" writes.
func (x *t) pinned(name, tag string) string {
	return x.ref(name, tag) + "@" + x.digests[name]
}

// chartImages are the --set arguments that point Volcano's chart at our
// images under tag: registry, names and tag, and, where the chart has a tag
// per component, each pinned by digest.
func (x *t) chartImages(tag string) []string {
	args := []string{"--set", "basic.image_registry=" + x.registry}
	for _, c := range ourComponents {
		args = append(args, "--set", c.nameValue+"="+ourPath+c.image)
	}
	args = append(args, "--set", "basic.image_tag_version="+tag)
	if x.componentTags {
		for _, c := range ourComponents {
			args = append(args, "--set", c.tagValue+"="+tag+"@"+x.digests[c.image])
		}
	}
	return args
}

// chartImage is the image chartImages(tag) gives the Deployment of name.
func (x *t) chartImage(name, tag string) string {
	if x.componentTags {
		return x.pinned(name, tag)
	}
	return x.ref(name, tag)
}

// chartHasValue reports whether the chart at dir has a value named key
// anywhere in its values.yaml.
func chartHasValue(dir, key string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		return false, err
	}
	return regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(key) + `:`).Match(data), nil
}

// The values the test adds to every Volcano install and upgrade: the real
// node (the KWOK node cannot run pods for real) and the images imported into
// its containerd, which no registry serves.
const realNodeValues = "hack/installtest/real-node-values.yaml"

func (x *t) steps(ctx context.Context) error {
	ns := "volcano-system"
	heading("install Volcano " + x.o.volcano + " with its chart, stock-built images")
	install := []string{"install", "volcano", x.o.chart, "-n", ns, "--create-namespace", "-f", realNodeValues}
	tag, err := x.chartImageTag()
	if err != nil {
		return err
	}
	// The stock images are tagged with the volcano module's version; a
	// chart whose default tag is another (v1.14.1's names v1.14.0) is told.
	if tag != x.o.volcano {
		install = append(install, "--set", "basic.image_tag_version="+x.o.volcano)
	}
	if err := x.helm(append(install, "--wait", "--timeout", "5m")...); err != nil {
		return err
	}
	if err := x.waitQueue(ctx); err != nil {
		return err
	}
	heading("a TensorFlow Job with Volcano's in-tree plugin")
	x.job(ctx, "stock-before", tensorflow.Name, tfArgs, tensorflow.EnvTFConfig, tensorflow.DefaultPort)
	x.chartConfigured("Volcano's own images", false)

	// Step 0 replaces a pod of Volcano's image that has no preStop pause yet:
	// Volcano's manager drops its connections on SIGTERM, which the API server
	// may still be using. That is Volcano's own behaviour on any rollout of
	// its admission pod, reported by countedUpgrade but not failed on.
	if err := x.countedUpgrade(ctx, ns, "", "probe-", x.doc, func() error { return x.upgrade(ctx, ns) }); err != nil {
		return err
	}

	x.chartConfigured("this project's images", true)

	heading("a Job of each framework with this project's plugins")
	// Volcano's chart passes the controller manager no extra arguments, so
	// its --wait-image stays the public default: each Job names the local
	// one (imported with the node's images) in its plugin's arguments.
	wi := "--wait-image=" + localcluster.WaitImage
	// By reference, which the default (auto) does not use for a job this
	// small: the controller writes <job>-tf-cluster through the chart's
	// RBAC and ConfigMap policy, and the kubelet expands TF_CONFIG from it.
	// The Verify Job below runs the default.
	x.job(ctx, "ours-"+tensorflow.Name, tensorflow.Name, append(slices.Clone(tfArgs), wi, "--tf-config="+string(tensorflow.Reference)), tensorflow.EnvTFConfig, tensorflow.DefaultPort)
	x.job(ctx, "ours-"+pytorch.Name, pytorch.Name, []string{"--master=" + leadTask, "--worker=" + workerTask, "--port=" + strconv.Itoa(pytorch.DefaultPort),
		"--wait-master-image=" + localcluster.WaitImage}, pytorch.EnvMasterAddr, pytorch.DefaultPort)
	x.job(ctx, "ours-"+mxnet.Name, mxnet.Name, []string{"--scheduler=" + leadTask, "--worker=" + workerTask, wi}, mxnet.EnvRole, mxnet.DefaultPort)
	// The MPI launcher (workerTask) waits for its worker's ssh port
	// (leadTask listens there) and gets the worker hosts in MPI_HOST.
	x.job(ctx, "ours-"+mpi.Name, mpi.Name, []string{"--master=" + workerTask, "--worker=" + leadTask, "--port=" + strconv.Itoa(tensorflow.DefaultPort), wi},
		mpi.EnvMPIHost, tensorflow.DefaultPort)
	// The other four frameworks, each with its lead role on leadTask (which
	// listens on the framework's port) and its workers on workerTask.
	x.job(ctx, "ours-"+xgboost.Name, xgboost.Name, []string{"--master=" + leadTask, "--worker=" + workerTask, wi}, xgboost.EnvMasterAddr, xgboost.DefaultPort)
	x.job(ctx, "ours-"+dask.Name, dask.Name, []string{"--scheduler=" + leadTask, "--worker=" + workerTask, wi}, dask.EnvSchedulerAddress, dask.DefaultPort, dask.DefaultClient)
	x.job(ctx, "ours-"+jax.Name, jax.Name, []string{"--worker=" + workerTask, wi}, jax.EnvJAXCoordinatorAddress, jax.DefaultPort)
	x.job(ctx, "ours-"+paddle.Name, paddle.Name, []string{"--master=" + leadTask, "--worker=" + workerTask, wi}, paddle.EnvMaster, paddle.DefaultPort)
	heading("docs/install.md's Verify Job (example/tensorflow/tensorflow.yaml)")
	x.verifyJob(ctx, wi)
	heading("the chart's policy on claims of a Job's objects (kube-apiserver, dry run)")
	x.claimsRefused(ctx)
	heading("the chart's policy on JobTemplates' bounds (kube-apiserver, dry run)")
	x.templateBoundsRefused(ctx)

	if err := x.nextReleaseAndBack(ctx, ns); err != nil {
		return err
	}

	heading("roll back and uninstall (docs/install.md)")
	if err := x.rollback(ns); err != nil {
		return err
	}
	heading("Volcano's in-tree plugin again")
	x.job(ctx, "stock-after", tensorflow.Name, tfArgs, tensorflow.EnvTFConfig, tensorflow.DefaultPort)
	if err := x.nothingOfOursLeft(ctx, ns); err != nil {
		return err
	}
	if err := x.withoutHelm(ctx, ns); err != nil {
		return err
	}
	heading("uninstall Volcano")
	return x.helm("uninstall", "volcano", "-n", ns, "--wait")
}

// chartImageTag is basic.image_tag_version of Volcano's chart: the tag its
// images have unless told otherwise.
func (x *t) chartImageTag() (string, error) {
	data, err := os.ReadFile(filepath.Join(x.o.chart, "values.yaml"))
	if err != nil {
		return "", err
	}
	var v struct {
		Basic struct {
			ImageTagVersion string `json:"image_tag_version"`
		} `json:"basic"`
	}
	if err := yaml.Unmarshal(data, &v); err != nil {
		return "", fmt.Errorf("%s/values.yaml: %v", x.o.chart, err)
	}
	return v.Basic.ImageTagVersion, nil
}

// chartObjects are one object of each kind whose admission Volcano's chart
// enables besides Jobs (v1.15: /podgroups/validate, /queues/mutate and
// /queues/validate, /hypernodes/validate, /cronjobs/validate), for a
// server-side dry run: the API server calls the webhooks (their side effects
// are None or NoneOnDryRun) and stores nothing.
const chartObjects = `apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: install-test-pg, namespace: default}
spec: {minMember: 1, queue: default}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: install-test-queue}
spec: {weight: 1}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: install-test-hypernode}
spec:
  tier: 1
  members:
    - type: Node
      selector: {exactMatch: {name: install-test-node}}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: CronJob
metadata: {name: install-test-cron, namespace: default}
spec:
  schedule: "0 0 1 1 *"
  suspend: true
  jobTemplate:
    spec:
      schedulerName: volcano
      minAvailable: 1
      tasks:
        - name: main
          replicas: 1
          template:
            spec:
              restartPolicy: Never
              containers:
                - {name: main, image: busybox:1.36.1, command: ["true"]}
`

// podLevelJob is a Job without plugins whose pod template sets pod-level
// resources that request more CPU than their limit: Volcano's job
// validation denies it while Kubernetes' PodLevelResources gate is on (its
// pod-template validation checks pod-level resources only then) and admits
// it while the gate is off.
const podLevelJob = `apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: install-test-pod-level, namespace: default}
spec:
  schedulerName: volcano
  minAvailable: 1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}
          containers:
            - {name: main, image: busybox:1.36.1, command: ["true"]}
`

// admissionGateHonoured checks that the webhook manager honours the
// --feature-gates Volcano's chart passes it from
// custom.admission_feature_gates (real-node-values.yaml turns
// PodLevelResources off): podLevelJob is admitted (server-side dry run).
// It returns the problems.
func (x *t) admissionGateHonoured() []string {
	out, err := x.dryRunCreate(podLevelJob, "a Job whose pod-level CPU request passes its limit; PodLevelResources=false")
	if err != nil {
		return []string{fmt.Sprintf("custom.admission_feature_gates=%s not honoured: a Job whose pod-level resources only the gate's validation refuses: %v: %s",
			admissionGates, err, strings.TrimSpace(string(out)))}
	}
	return nil
}

// mistypedJob is a tensorflow Job whose one argument is a typo of --port:
// Volcano's admission accepts it, ours warns of it, and in strict mode
// denies it.
const mistypedJob = `apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: install-test-strict, namespace: default}
spec:
  schedulerName: volcano
  minAvailable: 1
  plugins: {tensorflow: ["--prot=2222"]}
  tasks:
    - name: worker
      replicas: 2
      template:
        spec:
          restartPolicy: Never
          containers:
            - {name: main, image: busybox:1.36.1, command: ["true"]}
`

// strictMode checks strict mode as Volcano's chart turns it on
// (real-node-values.yaml: custom.admission_config_override), with a server-
// side dry run of mistypedJob: our webhook manager denies it naming the
// argument, Volcano's own (ours false), which ignores the key, admits it. It
// returns the problems.
func (x *t) strictMode(ours bool) []string {
	out, err := x.dryRunCreate(mistypedJob, "a tensorflow Job with --prot=2222; strictPluginArguments: true")
	switch {
	case ours && (err == nil || !strings.Contains(string(out), `"--prot=2222": plugin tensorflow: unknown flag --prot`)):
		return []string{fmt.Sprintf("strict mode from custom.admission_config_override: want the mistyped Job denied naming --prot, got %v: %s", err, strings.TrimSpace(string(out)))}
	case !ours && err != nil:
		return []string{fmt.Sprintf("Volcano's own manager with strictPluginArguments in its admission configuration: want the mistyped Job admitted, got %v: %s", err, strings.TrimSpace(string(out)))}
	}
	return nil
}

// dryRunCreate runs kubectl create --dry-run=server on the objects of yaml
// (what says which), printing the command and its output, and returns the
// output.
func (x *t) dryRunCreate(yaml, what string) ([]byte, error) {
	cmd := exec.Command("kubectl", "create", "--dry-run=server", "-f", "-")
	cmd.Env = x.env
	cmd.Stdin = strings.NewReader(yaml)
	fmt.Printf("$ kubectl create --dry-run=server -f - (%s)\n", what)
	out, err := cmd.CombinedOutput()
	fmt.Print(string(out))
	return out, err
}

// admissionGates is custom.admission_feature_gates in real-node-values.yaml.
const admissionGates = "PodLevelResources=false"

// chartConfigured checks, with the managers of images ("Volcano's own
// images" or "this project's images"), what Volcano's chart configures
// beyond Jobs: every admission its --enabled-admission list names answers (a
// server-side dry run of chartObjects; a manager that does not serve a path
// fails it with 404, failurePolicy Fail), and the controller manager serves
// metrics behind the chart's volcano-controllers-service (--enable-metrics,
// :8081), read through the API server's service proxy. Records the result.
func (x *t) chartConfigured(images string, ours bool) {
	heading("what Volcano's chart configures, with " + images + ": its admissions and the controller metrics")
	var problems []string
	create := func() ([]byte, error) {
		return x.dryRunCreate(chartObjects, "a PodGroup, Queue, HyperNode and CronJob")
	}
	out, err := create()
	if err != nil && strings.Contains(string(out), "context deadline exceeded") {
		// Right after a rollout the API server may still hold an HTTP/2
		// connection to an admission pod that is gone (seen once in 3 runs:
		// every call on it times out, the next on a new one is answered).
		// That is the rollout's, which countedUpgrade measures; this step
		// checks what the chart configures, so it tries once more.
		fmt.Println("calls timed out right after the rollout; once more after 10 s")
		time.Sleep(10 * time.Second)
		out, err = create()
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf("dry-run create of a PodGroup, Queue, HyperNode and CronJob: %v: %s", err, strings.TrimSpace(string(out))))
	}
	var metrics []byte
	// Up to 3 minutes: the controller pod may still be replacing the old
	// one when this starts (one run of ours missed a 1-minute poll).
	err = wait.PollUntilContextTimeout(context.Background(), 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		metrics, err = x.kube.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/volcano-system/services/volcano-controllers-service:metrics/proxy/metrics").DoRaw(ctx)
		return err == nil, nil
	})
	if err != nil || !strings.Contains(string(metrics), "# HELP ") {
		problems = append(problems, fmt.Sprintf("controller metrics through volcano-controllers-service:metrics: %v (%d bytes)", err, len(metrics)))
		// What the proxy would have reached: the Service's endpoints, the
		// controller pods and the end of their logs.
		x.printKubectl(
			[]string{"-n", "volcano-system", "get", "pods,endpoints", "-o", "wide"},
			[]string{"-n", "volcano-system", "logs", "-l", "app=volcano-controller", "--tail=40", "--all-containers"})
	}
	if x.admissionGates {
		problems = append(problems, x.admissionGateHonoured()...)
	}
	problems = append(problems, x.strictMode(ours)...)
	line := "with " + images + ": Volcano's chart's admissions and controller metrics answer"
	if len(problems) > 0 {
		line = "with " + images + ": " + strings.Join(problems, "; ")
	}
	x.record(len(problems) == 0, line)
}

// withoutHelm is docs/install.md's "Install without Helm" onto the same
// Volcano (back on its own images after the Helm pass's rollback), with a Job
// create every second counted as in the Helm pass: step 0 apart, then the
// RBAC and the two patches until the configurations exist, which must fail
// no create. Then a framework Job on our images, the uninstall without Helm
// and the check that nothing of ours is left.
func (x *t) withoutHelm(ctx context.Context, ns string) error {
	if err := x.countedUpgrade(ctx, ns, " without Helm", "nohelm-probe-", x.noHelm, func() error { return x.upgradeWithoutHelm(ns) }); err != nil {
		return err
	}
	heading("without Helm: a TensorFlow Job with this project's plugin")
	x.job(ctx, "nohelm-"+tensorflow.Name, tensorflow.Name, append(slices.Clone(tfArgs), "--wait-image="+localcluster.WaitImage), tensorflow.EnvTFConfig, tensorflow.DefaultPort)
	heading("uninstall without Helm (docs/install.md)")
	if err := x.uninstallWithoutHelm(ns); err != nil {
		return err
	}
	return x.nothingOfOursLeft(ctx, ns)
}

// countedUpgrade runs step 0 of docs/install.md (the readiness probe and
// preStop pause on Volcano's admission Deployment) and then upgrade (steps
// 1-3), with a Job create every second (Job names starting with prefix)
// counted apart for each. It prints and records "failed creates during step
// 0<pass>", "failed creates during upgrade<pass>" and "upgrade<pass> took",
// and records a failure for every create that failed during the upgrade
// (step 0's are Volcano's own behaviour, reported only). It returns the error
// of step 0 or of upgrade.
func (x *t) countedUpgrade(ctx context.Context, ns, pass, prefix string, doc docSteps, upgrade func() error) error {
	var phase atomic.Pointer[createCounts]
	step0, upgraded := &createCounts{}, &createCounts{}
	phase.Store(step0)
	stopCreates := x.startCreates(ctx, prefix, &phase)
	heading("step 0" + pass + ": readiness probe and preStop pause for Volcano's admission (docs/install.md), creating a Job every second")
	err := x.runDoc(doc, 0, subst{docRolloutStatus, "rollout status deployment volcano-admission --timeout 3m"})
	time.Sleep(3 * time.Second) // the old pod's last calls, if step 0 rolled it
	var took time.Duration
	if err == nil {
		heading("steps 1-3" + pass + ": upgrade to framework-plugins " + x.o.version + " (docs/install.md), creating a Job every second")
		phase.Store(upgraded)
		start := time.Now()
		err = upgrade()
		took = time.Since(start)
		time.Sleep(3 * time.Second) // a few creates after the rollout
	}
	stopCreates()
	step0Name := "step 0" + pass
	if pass == "" {
		step0Name = "step 0 (Volcano's pods replaced by Volcano's)"
	}
	lines := []string{
		fmt.Sprintf("failed creates during %s: %d (of %d)%s", step0Name, step0.failed.Load(), step0.creates.Load(), step0.firstSuffix()),
		fmt.Sprintf("failed creates during upgrade%s: %d (of %d)", pass, upgraded.failed.Load(), upgraded.creates.Load()),
		fmt.Sprintf("upgrade%s took: %.1fs", pass, took.Seconds()),
	}
	x.results = append(x.results, lines...)
	for _, r := range lines {
		fmt.Println(r)
	}
	if upgraded.failed.Load() > 0 {
		x.describeAdmission(ns)
		x.failed = append(x.failed, fmt.Sprintf("%d Job creates failed during the upgrade%s, first: %v", upgraded.failed.Load(), pass, upgraded.first.Load()))
	}
	return err
}

// patchPlaceholder is the registry the volcano-patches name, which never
// resolves: the test puts the local name of make images's tarballs there.
const patchPlaceholder = "REGISTRY.example.invalid/"

// upgradeWithoutHelm is steps 1-3 of docs/install.md's "Install without
// Helm", its commands as the page shows them (x.noHelm) but for the patch
// files: copies of the line's, with the placeholder registry replaced by the
// image pushed, by digest, as the page says to. Then both Deployments have
// rolled out (the page waits for the admission only).
func (x *t) upgradeWithoutHelm(ns string) error {
	if err := x.runDoc(x.noHelm, 1); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "installtest-patches-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	substs := []subst{{docRolloutStatus, "rollout status deployment volcano-admission --timeout 3m"}}
	for _, d := range ourComponents {
		if !d.patched {
			continue
		}
		src := filepath.Join(x.o.patches, d.deployment+".yaml")
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		// The patch must name this release's image (VERSION); only the
		// registry is the user's to fill in.
		want := patchPlaceholder + ourPath + d.image + ":" + x.o.version
		if !strings.Contains(string(data), "image: "+want+"\n") {
			return fmt.Errorf("%s does not name image %s", src, want)
		}
		patch := filepath.Join(dir, d.deployment+".yaml")
		if err := os.WriteFile(patch, []byte(strings.ReplaceAll(string(data), "image: "+want+"\n", "image: "+x.pinned(d.image, x.o.version)+"\n")), 0o600); err != nil {
			return err
		}
		substs = append(substs, subst{docPatchFile(d.deployment), "--patch-file " + patch})
	}
	if err := x.runDoc(x.noHelm, 2, substs...); err != nil {
		return err
	}
	if err := x.sh("kubectl", "-n", ns, "rollout", "status", "deployment", "volcano-controllers", "--timeout", "3m"); err != nil {
		return err
	}
	return x.runDoc(x.noHelm, 3)
}

// uninstallWithoutHelm is "Uninstall" without Helm: the configurations
// first, as with Helm, so that no stock manager is asked for our paths; then
// both patches undone (the patch is each Deployment's last change); then the
// RBAC.
func (x *t) uninstallWithoutHelm(ns string) error {
	if err := x.deleteConfigurations(); err != nil {
		return err
	}
	for _, d := range []string{"volcano-admission", "volcano-controllers"} {
		if err := x.sh("kubectl", "-n", ns, "rollout", "undo", "deployment/"+d); err != nil {
			return err
		}
	}
	for _, d := range []string{"volcano-admission", "volcano-controllers"} {
		if err := x.sh("kubectl", "-n", ns, "rollout", "status", "deployment", d, "--timeout", "3m"); err != nil {
			return err
		}
	}
	return x.sh("kubectl", "delete", "-f", "installer/framework-plugins.yaml", "--wait")
}

// upgrade is docs/install.md's "Onto an existing Volcano", with the test's
// real-node values added: the chart with its default values (RBAC only:
// webhook.create is false), among it the Role that lets the new webhook
// manager list the admission service's endpoints; a check that Volcano,
// still on its own images, admits a plain and a framework Job; then
// Volcano's release, whose new webhook manager creates this project's two
// webhook configurations once no old pod is a ready endpoint. It returns
// when both configurations exist.
func (x *t) upgrade(ctx context.Context, ns string) error {
	if err := x.docStep(1, subst{docOurChart, "helm install framework-plugins " + x.o.chartPackage + " "}); err != nil {
		return err
	}
	if err := x.stockAdmitsJobs(ctx); err != nil {
		x.failed = append(x.failed, err.Error())
	}
	// Volcano's chart of the line from the module cache; volcano-values.yaml
	// names a placeholder registry: the user's is the cluster's, where push
	// put our images.
	if err := x.docStep(2,
		subst{docVolcanoChart, x.o.chart + " "},
		subst{docVolcanoValues, "-f " + x.o.values + " -f " + realNodeValues + " " +
			strings.Join(x.chartImages(x.o.version), " ") + " --timeout 5m "}); err != nil {
		return err
	}
	return x.docStep(3)
}

// docStep runs step n of docs/install.md's block with Helm (x.doc).
func (x *t) docStep(n int, substs ...subst) error {
	return x.runDoc(x.doc, n, substs...)
}

// runDoc runs step n of one of docs/install.md's blocks with substs, each
// command with sh -c, printed with its output.
func (x *t) runDoc(doc docSteps, n int, substs ...subst) error {
	cmds, err := doc.commands(n, substs...)
	if err != nil {
		return fmt.Errorf("%s: %w", installDoc, err)
	}
	for _, c := range cmds {
		if err := x.sh("sh", "-c", c); err != nil {
			return err
		}
	}
	return nil
}

// waitConfigurations is step 3: until both of our configurations exist
// (the new webhook manager creates them), for at most 180 s.
func (x *t) waitConfigurations() error {
	return x.sh("timeout", "180", "sh", "-c", "until kubectl get mutatingwebhookconfiguration/"+webhook.ConfigurationName(webhook.MutatePath)+
		" validatingwebhookconfiguration/"+webhook.ConfigurationName(webhook.ValidatePath)+"; do sleep 2; done")
}

// deleteConfigurations is step 1 of the uninstall.
func (x *t) deleteConfigurations() error {
	if err := x.sh("kubectl", "delete", "mutatingwebhookconfiguration", webhook.ConfigurationName(webhook.MutatePath), "--ignore-not-found"); err != nil {
		return err
	}
	return x.sh("kubectl", "delete", "validatingwebhookconfiguration", webhook.ConfigurationName(webhook.ValidatePath), "--ignore-not-found")
}

// stockAdmitsJobs: with our chart installed with its default values and
// Volcano still on its own images, no configuration of ours exists and a
// plain Job and a TensorFlow Job (Volcano's in-tree plugin) are created.
// Issue #25: the chart's old default, webhook.create=true, made both fail
// with "the server could not find the requested resource".
func (x *t) stockAdmitsJobs(ctx context.Context) error {
	heading("the chart's defaults with Volcano's own images: Job creates admitted")
	var problems []string
	if _, err := x.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, webhook.ConfigurationName(webhook.MutatePath), metav1.GetOptions{}); err == nil {
		problems = append(problems, "the chart's defaults created "+webhook.ConfigurationName(webhook.MutatePath))
	}
	if _, err := x.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, webhook.ConfigurationName(webhook.ValidatePath), metav1.GetOptions{}); err == nil {
		problems = append(problems, "the chart's defaults created "+webhook.ConfigurationName(webhook.ValidatePath))
	}
	for _, j := range []*batch.Job{
		realNodeJob("defaults-plain", "", nil, "true"),
		realNodeJob("defaults-"+tensorflow.Name, tensorflow.Name, tfArgs, "true"),
	} {
		// Pending forever on no node: the create is what is checked.
		for i := range j.Spec.Tasks {
			j.Spec.Tasks[i].Template.Spec.NodeSelector = map[string]string{"install-test/none": "true"}
		}
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		_, err := x.vc.BatchV1alpha1().Jobs("default").Create(cctx, j, metav1.CreateOptions{})
		cancel()
		if err != nil {
			problems = append(problems, "create "+j.Name+": "+err.Error())
			continue
		}
		_ = x.vc.BatchV1alpha1().Jobs("default").Delete(ctx, j.Name, metav1.DeleteOptions{})
	}
	if len(problems) > 0 {
		line := "with the chart's defaults and Volcano's own images: " + strings.Join(problems, "; ")
		fmt.Println(line)
		return fmt.Errorf("%s", line)
	}
	x.record(true, "with the chart's defaults and Volcano's own images: no configuration of ours, a plain and a TensorFlow Job created")
	return nil
}

// rollback is docs/install.md's "Uninstall": this project's webhook
// configurations first (our running manager recreates them only when it
// restarts), so that no Job create is sent to a stock manager for a path it
// does not serve; then Volcano's release back to its first revision; then the
// chart (RBAC).
func (x *t) rollback(ns string) error {
	if err := x.deleteConfigurations(); err != nil {
		return err
	}
	if err := x.helm("rollback", "volcano", "1", "-n", ns, "--wait", "--timeout", "5m"); err != nil {
		return err
	}
	// Volcano's own webhooks answer once the rolled-back pod is ready, which
	// the probe makes mean "listening".
	if err := x.sh("kubectl", "-n", ns, "rollout", "status", "deployment", "volcano-admission", "--timeout", "3m"); err != nil {
		return err
	}
	return x.helm("uninstall", "framework-plugins", "-n", ns, "--wait")
}

// ourComponents are this project's images in Volcano's chart: the Deployment
// each runs in, the chart's values that name its image and (Volcano v1.15 on)
// give it a tag of its own, and whether "Install without Helm" patches it
// (installer/volcano-patches/<deployment>.yaml).
var ourComponents = []struct {
	deployment, image, nameValue, tagValue string
	patched                                bool
}{
	{"volcano-controllers", "vc-controller-manager", "basic.controller_image_name", "basic.controller_image_tag_version", true},
	{"volcano-admission", "vc-webhook-manager", "basic.admission_image_name", "basic.admission_image_tag_version", true},
	{"volcano-scheduler", "vc-scheduler", "basic.scheduler_image_name", "basic.scheduler_image_tag_version", false},
}

// ourImages are the names of this project's images (ourComponents).
func ourImages() []string {
	names := make([]string, len(ourComponents))
	for i, c := range ourComponents {
		names[i] = c.image
	}
	return names
}

// nextReleaseAndBack is docs/install.md's "Upgrade" to a new release of this
// project and "Roll back to the previous release": Volcano's release upgraded
// to the images of the next release (here this release's images pushed
// again under the tag <version>-next: the same build under a new tag, so
// that every pod is replaced as between two releases), then `helm rollback
// volcano <revision>` to this release, with a Job created every second
// through both; afterwards every Deployment runs this release's images again.
func (x *t) nextReleaseAndBack(ctx context.Context, ns string) error {
	next := x.o.version + "-next"
	heading("upgrade to the next release of ours (" + next + ") and roll back to " + x.o.version + " (docs/install.md), creating a Job every second")
	if err := x.push(next, false); err != nil {
		return err
	}
	out, err := x.output(filepath.Join(x.o.binDir, "helm"), "history", "volcano", "-n", ns, "--max", "1", "-o", "json")
	if err != nil {
		return err
	}
	var history []struct {
		Revision int `json:"revision"`
	}
	if err := json.Unmarshal(out, &history); err != nil || len(history) != 1 {
		return fmt.Errorf("helm history volcano: %q: %v", out, err)
	}
	ours := strconv.Itoa(history[0].Revision)
	upgrade := func() error {
		return x.helm(append(append([]string{"upgrade", "volcano", x.o.chart, "-n", ns, "--reuse-values"}, x.chartImages(next)...), "--wait", "--timeout", "5m")...)
	}
	back := func() error {
		if err := x.helm("rollback", "volcano", ours, "-n", ns, "--wait", "--timeout", "5m"); err != nil {
			return err
		}
		return x.sh("kubectl", "-n", ns, "rollout", "status", "deployment", "volcano-admission", "--timeout", "3m")
	}
	for _, op := range []struct {
		what, prefix string
		run          func() error
	}{{"upgrade to " + next, "next-", upgrade}, {"rollback to " + x.o.version + " (revision " + ours + ")", "back-", back}} {
		if err := x.countedOp(ctx, op.what, op.prefix, op.run); err != nil {
			return err
		}
	}
	// Every Deployment runs this release's image again, and its pods run
	// what the registry served under the digest push printed.
	for _, c := range ourComponents {
		d, name := c.deployment, c.image
		dep, err := x.kube.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if img, want := dep.Spec.Template.Spec.Containers[0].Image, x.chartImage(name, x.o.version); img != want {
			x.failed = append(x.failed, fmt.Sprintf("after the rollback, deployment %s runs %s, not this release's %s", d, img, want))
		}
		pods, err := x.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(dep.Spec.Selector)})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.ContainerStatuses {
				if c.Name == dep.Spec.Template.Spec.Containers[0].Name && !strings.HasSuffix(c.ImageID, "@"+x.digests[name]) {
					x.failed = append(x.failed, fmt.Sprintf("pod %s runs image %s, not the %s the registry served", p.Name, c.ImageID, x.digests[name]))
				}
			}
		}
	}
	return x.waitConfigurations()
}

// countedOp runs op with a Job created every second (createLoop), records
// how many creates failed during it and fails the test if any did.
func (x *t) countedOp(ctx context.Context, what, prefix string, op func() error) error {
	var phase atomic.Pointer[createCounts]
	counts := &createCounts{}
	phase.Store(counts)
	stopCreates := x.startCreates(ctx, prefix, &phase)
	start := time.Now()
	err := op()
	took := time.Since(start)
	time.Sleep(3 * time.Second) // a few creates after the rollout
	stopCreates()
	line := fmt.Sprintf("failed creates during %s: %d (of %d), took %.1fs%s", what, counts.failed.Load(), counts.creates.Load(), took.Seconds(), counts.firstSuffix())
	x.results = append(x.results, line)
	fmt.Println(line)
	if counts.failed.Load() > 0 {
		x.describeAdmission("volcano-system")
		x.failed = append(x.failed, fmt.Sprintf("%d Job creates failed during %s, first: %v", counts.failed.Load(), what, counts.first.Load()))
	}
	return err
}

// nothingOfOursLeft: no webhook configuration, ClusterRole or Role of ours, and
// Volcano's Deployments on Volcano's images.
func (x *t) nothingOfOursLeft(ctx context.Context, ns string) error {
	var left []string
	mw, err := x.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	vw, err := x.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	crs, err := x.kube.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	roles, err := x.kube.RbacV1().Roles(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, k := range []struct {
		kind, substring string
		names           []string
	}{
		{"MutatingWebhookConfiguration", "frameworks", objectNames(mw.Items)},
		{"ValidatingWebhookConfiguration", "frameworks", objectNames(vw.Items)},
		{"ClusterRole", "framework-plugins", objectNames(crs.Items)},
		{"Role", "framework-plugins", objectNames(roles.Items)},
	} {
		for _, n := range k.names {
			if strings.Contains(n, k.substring) {
				left = append(left, k.kind+" "+n)
			}
		}
	}
	deps, err := x.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, d := range deps.Items {
		for _, c := range d.Spec.Template.Spec.Containers {
			if strings.HasPrefix(c.Image, x.registry+"/"+ourPath) {
				left = append(left, "Deployment "+d.Name+" image "+c.Image)
			}
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("left after the uninstall: %s", strings.Join(left, ", "))
	}
	x.results = append(x.results, "nothing of framework-plugins left after the uninstall")
	return nil
}

// objectNames are the names of a list's items.
func objectNames[T any, PT interface {
	*T
	GetName() string
}](items []T) []string {
	var n []string
	for i := range items {
		n = append(n, PT(&items[i]).GetName())
	}
	return n
}

// waitQueue waits for the default Queue, which Volcano's pods create.
func (x *t) waitQueue(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		q, err := x.vc.SchedulingV1beta1().Queues().Get(ctx, "default", metav1.GetOptions{})
		return err == nil && q.Status.State == "Open", nil
	})
}

// createCounts are the Job creates of one phase of the install test.
type createCounts struct {
	creates, failed atomic.Int64
	first           atomic.Value // the first failure's error text
}

func (c *createCounts) firstSuffix() string {
	if f := c.first.Load(); f != nil {
		return fmt.Sprintf(", first: %v", f)
	}
	return ""
}

// startCreates runs createLoop in the background until the returned stop,
// which returns once the loop has ended.
func (x *t) startCreates(ctx context.Context, prefix string, phase *atomic.Pointer[createCounts]) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		x.createLoop(ctx, prefix, done, phase)
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// createLoop creates (and deletes) a one-pod Job named <prefix><n> every
// second until stop, counting the creates and those that fail in the phase
// phase holds.
func (x *t) createLoop(ctx context.Context, prefix string, stop chan struct{}, phase *atomic.Pointer[createCounts]) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		c := phase.Load()
		j := realNodeJob(fmt.Sprintf("%s%d", prefix, i), "", nil, "true")
		// Pending forever on no node: the create is what is measured.
		j.Spec.Tasks[0].Template.Spec.NodeSelector = map[string]string{"install-test/none": "true"}
		c.creates.Add(1)
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		_, err := x.vc.BatchV1alpha1().Jobs("default").Create(cctx, j, metav1.CreateOptions{})
		cancel()
		if err != nil {
			c.failed.Add(1)
			c.first.CompareAndSwap(nil, err.Error())
			fmt.Printf("  %s create %s: %v\n", time.Now().Format("15:04:05"), j.Name, err)
			continue
		}
		_ = x.vc.BatchV1alpha1().Jobs("default").Delete(ctx, j.Name, metav1.DeleteOptions{})
	}
}

// The two tasks of the install test's Jobs: TensorFlow's default ps and
// worker, which the other frameworks' flags name as their lead and workers.
const (
	leadTask   = tensorflow.DefaultPS
	workerTask = tensorflow.DefaultWorker
)

// tfArgs are the TensorFlow Jobs' arguments, in the flags and defaults
// Volcano's in-tree plugin and ours share.
var tfArgs = []string{"--ps=" + leadTask, "--worker=" + workerTask, "--port=" + strconv.Itoa(tensorflow.DefaultPort)}

// job runs a Job of tasks leadTask, workerTask and extraTasks with plugin on the real
// node: the lead accepts a connection on port once for each other task (each
// for at most 20 s), the others check that env var is set. This project's
// plugins hold the other tasks back in a wait init container until the lead
// answers there (or resolves, for PyTorch), Volcano's do not. Records the
// result.
//
// One connection per waiting task: busybox's nc -l serves one and exits, so
// with Dask's worker and client both waiting, the second wait could find the
// port closed for good and the Job stayed Pending (seen once in CI).
func (x *t) job(ctx context.Context, name, plugin string, args []string, env string, port int, extraTasks ...string) {
	j := realNodeJob(name, plugin, args, fmt.Sprintf(`case $(hostname) in *-%[3]s-0) i=0; while [ $i -lt %[4]d ]; do timeout 20 nc -l -p %[2]d || true; i=$((i+1)); done;; *) test -n "$%[1]s" && echo %[1]s="$%[1]s";; esac`,
		env, port, leadTask, 1+len(extraTasks)))
	// A role beyond the two (Dask's client) runs what workerTask runs.
	for _, name := range extraTasks {
		task := *j.Spec.Tasks[1].DeepCopy()
		task.Name = name
		j.Spec.Tasks = append(j.Spec.Tasks, task)
		j.Spec.MinAvailable++
	}
	x.runJob(ctx, plugin, j)
}

// verifyJob runs docs/install.md's Verify Job, example/tensorflow/tensorflow.yaml,
// on the real node: its public image swapped for the local training image
// (training.Localize; the node pulls nothing), and the local wait image in
// its plugin's arguments (see steps). Records the result.
func (x *t) verifyJob(ctx context.Context, waitImageArg string) {
	const file = "example/tensorflow/tensorflow.yaml"
	report := func(err error) { x.record(false, fmt.Sprintf("job %s: %v", file, err)) }
	if _, err := os.Stat(filepath.Join(x.o.imageDir, filepath.Base(training.ImageTar))); err != nil {
		report(fmt.Errorf("its image is not built (make node-images-training): %w", err))
		return
	}
	j, err := training.LoadJob(".", file)
	if err == nil {
		_, err = training.Localize(j)
	}
	if err != nil {
		report(err)
		return
	}
	training.OnRealNode(j)
	j.Spec.Plugins[tensorflow.Name] = append(j.Spec.Plugins[tensorflow.Name], waitImageArg)
	x.runJob(ctx, tensorflow.Name, j)
}

// claimsRefused checks, through the API server, that a user other than
// Volcano's controllers cannot create a ConfigMap the tensorflow plugin would
// adopt (<job>-tf-cluster controlled by Volcano Job <job>), and can create
// one of that name without the reference. Both requests are dry runs: the
// chart's ValidatingAdmissionPolicies apply to them, nothing is stored.
func (x *t) claimsRefused(ctx context.Context) {
	job := &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: "claimed", Namespace: "default", UID: "00000000-0000-0000-0000-000000000001"}}
	cm := func(refs ...metav1.OwnerReference) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: tensorflow.ConfigMapName(job), Namespace: job.Namespace, OwnerReferences: refs}}
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	_, err := x.kube.CoreV1().ConfigMaps(job.Namespace).Create(ctx, cm(ownedcm.ControllerRef(job)), dry)
	want := "names Volcano Job " + job.Name + " as its controller"
	x.record(apierrors.IsForbidden(err) && strings.Contains(fmt.Sprint(err), want),
		fmt.Sprintf("policy: ConfigMap %s controlled by Volcano Job %s, created by the admin: %v", tensorflow.ConfigMapName(job), job.Name, err))
	_, err = x.kube.CoreV1().ConfigMaps(job.Namespace).Create(ctx, cm(), dry)
	x.record(err == nil, fmt.Sprintf("policy: ConfigMap %s without the reference, created by the admin: %v", tensorflow.ConfigMapName(job), err))
}

// templateBoundsRefused checks, through the API server, that the chart's
// job-template-bounds policy refuses a flow JobTemplate of jobs.MaxTasks+1
// tasks (JobTemplates have no webhook; vc-controller-manager caches them
// decoded in full: security round 4, M3) and lets one of two tasks through.
// Both are dry runs.
func (x *t) templateBoundsRefused(ctx context.Context) {
	template := func(tasks int) []byte {
		var ts []string
		for i := 0; i < tasks; i++ {
			ts = append(ts, fmt.Sprintf(`{"name":"t%d","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}`, i))
		}
		return []byte(fmt.Sprintf(`{"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobTemplate","metadata":{"name":"bounds-%d","namespace":"default"},"spec":{"tasks":[%s]}}`,
			tasks, strings.Join(ts, ",")))
	}
	create := func(body []byte) error {
		return x.vc.FlowV1alpha1().RESTClient().Post().Namespace("default").Resource("jobtemplates").
			Param("dryRun", metav1.DryRunAll).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	}
	err := create(template(jobs.MaxTasks + 1))
	x.record((apierrors.IsInvalid(err) || apierrors.IsForbidden(err)) && strings.Contains(fmt.Sprint(err), "MaxTasks"),
		fmt.Sprintf("policy: JobTemplate of %d tasks: %v", jobs.MaxTasks+1, err))
	err = create(template(2))
	x.record(err == nil, fmt.Sprintf("policy: JobTemplate of 2 tasks: %v", err))
}

// record prints line and keeps it among the results, and among the failures
// unless ok.
func (x *t) record(ok bool, line string) {
	fmt.Println(line)
	x.results = append(x.results, line)
	if !ok {
		x.failed = append(x.failed, line)
	}
}

// runJob creates j in namespace default, waits up to 4 minutes for it to
// end, records whether it Completed, and deletes it.
func (x *t) runJob(ctx context.Context, plugin string, j *batch.Job) {
	name := j.Name
	start := time.Now()
	res := func(ok bool, what string) {
		line := fmt.Sprintf("job %-16s %-10s %s (%.0fs)", name, plugin, what, time.Since(start).Seconds())
		fmt.Println(line)
		x.results = append(x.results, line)
		if !ok {
			x.failed = append(x.failed, "job "+name+": "+what)
		}
	}
	if _, err := x.vc.BatchV1alpha1().Jobs("default").Create(ctx, j, metav1.CreateOptions{}); err != nil {
		res(false, "create: "+err.Error())
		return
	}
	var phase batch.JobPhase
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := x.vc.BatchV1alpha1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		phase = got.Status.State.Phase
		return phase == batch.Completed || phase == batch.Failed || phase == batch.Aborted, nil
	})
	if err != nil || phase != batch.Completed {
		res(false, fmt.Sprintf("phase %q: %v", phase, err))
		x.describeJob(name)
	} else {
		res(true, "Completed")
	}
	_ = x.vc.BatchV1alpha1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{})
}

// describeJob prints what explains a Job that did not complete: the Job and
// its PodGroup (status and conditions), its pods and the namespace's events,
// and the end of the in-cluster controller's and scheduler's logs.
func (x *t) describeJob(name string) {
	x.printKubectl(
		[]string{"-n", "default", "get", "jobs.batch.volcano.sh", name, "-o", "yaml"},
		[]string{"-n", "default", "get", "podgroups.scheduling.volcano.sh", "-o", "yaml"},
		[]string{"-n", "default", "get", "pods", "-l", "volcano.sh/job-name=" + name, "-o", "wide"},
		[]string{"-n", "default", "get", "events", "--sort-by=.lastTimestamp"},
		[]string{"-n", "volcano-system", "get", "pods", "-o", "wide"},
		[]string{"-n", "volcano-system", "logs", "-l", "app=volcano-controller", "--tail=80", "--all-containers", "--prefix"},
		[]string{"-n", "volcano-system", "logs", "-l", "app=volcano-scheduler", "--tail=80", "--all-containers", "--prefix"})
}

// describeAdmission prints what explains Job creates that failed during a
// rollout of Volcano's admission pods: the pods (restarts, readiness), the
// admission Service's EndpointSlices, the namespace's events and the pods'
// logs, the previous container's too.
func (x *t) describeAdmission(ns string) {
	x.printKubectl(
		[]string{"-n", ns, "get", "pods", "-o", "wide"},
		[]string{"-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=volcano-admission-service", "-o", "yaml"},
		[]string{"-n", ns, "get", "events", "--sort-by=.lastTimestamp"},
		[]string{"-n", ns, "logs", "-l", "app=volcano-admission", "--tail=100", "--all-containers", "--prefix"},
		[]string{"-n", ns, "logs", "-l", "app=volcano-admission", "--tail=100", "--all-containers", "--prefix", "--previous"})
}

// printKubectl runs kubectl with each of commands' arguments against the
// cluster and prints each command and its output (errors included), for a
// failure's diagnosis.
func (x *t) printKubectl(commands ...[]string) {
	for _, args := range commands {
		cmd := exec.Command("kubectl", args...)
		cmd.Env = x.env
		out, _ := cmd.CombinedOutput()
		fmt.Printf("$ kubectl %s\n%s", strings.Join(args, " "), out)
	}
}

// realNodeJob is a Job of tasks leadTask and workerTask (one pod each) on the real node
// running busybox sh -c script, with plugin and the svc plugin ("" for none).
func realNodeJob(name, plugin string, args []string, script string) *batch.Job {
	task := func(n string) batch.TaskSpec {
		return batch.TaskSpec{
			Name: n, Replicas: 1,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector:  map[string]string{localcluster.RealNodeLabel: "true"},
				Tolerations:   []corev1.Toleration{localcluster.RealNodeToleration()},
				Containers: []corev1.Container{{
					Name: "main", Image: localcluster.WaitImage, ImagePullPolicy: corev1.PullNever,
					Command: []string{"sh", "-c", script},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
				}},
			}},
		}
	}
	j := &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batch.JobSpec{
			SchedulerName: "volcano", MinAvailable: 2,
			Tasks: []batch.TaskSpec{task(leadTask), task(workerTask)},
		},
	}
	if plugin != "" {
		j.Spec.Plugins = map[string][]string{plugin: args, framework.SvcPlugin: {}}
	}
	return j
}

func heading(s string) { fmt.Printf("\n=== %s\n", s) }

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "installtest:", err)
	return 1
}

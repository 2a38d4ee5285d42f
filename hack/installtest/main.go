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
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
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
	// images are imported, and ctr the node's own ctr that imports them.
	containerd, ctr string
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
		containerd: cl.RealNode.ContainerdSocket, ctr: cl.RealNode.Ctr, registry: cl.RegistryAddress(), digests: map[string]string{}}
	// kubeutil.Warnings drops the one warning every Job created through the
	// typed client draws (its null creationTimestamp) and prints the rest.
	clients, err := kubeutil.NewClients(cl.RESTConfig, kubeutil.Warnings{Prefix: "installtest: API server warning: "})
	if err != nil {
		return fail(err)
	}
	x.kube, x.vc = clients.Kube, clients.Volcano
	// Volcano's own images, as the user's cluster has them already: imported
	// into the node. Ours take the user's path: pushed to a registry, pulled
	// from it by the node's containerd, by digest.
	tars, _ := filepath.Glob(filepath.Join(o.installImages, "stock-*.tar"))
	if len(tars) == 0 {
		return fail(fmt.Errorf("no image tarballs of Volcano's in %s (make images)", o.installImages))
	}
	for _, f := range tars {
		if err := x.sh(x.ctr, "--address", x.containerd, "-n", "k8s.io", "images", "import", f); err != nil {
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
	// Each framework's Job comes from its Sample (frameworkJob): with
	// tensorflow's, by reference, which the default (auto) does not use for
	// a job this small: the controller writes <job>-tf-cluster through the
	// chart's RBAC and ConfigMap policy, and the kubelet expands TF_CONFIG
	// from it. The Verify Job below runs the default.
	for _, f := range samples.Frameworks() {
		j, err := frameworkJob(f, localcluster.WaitImage)
		if err != nil {
			x.record(false, "job ours-"+f.Name+": "+err.Error())
			continue
		}
		x.runJob(ctx, f.Name, j)
	}
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

// record prints line and keeps it among the results, and among the failures
// unless ok.
func (x *t) record(ok bool, line string) {
	fmt.Println(line)
	x.results = append(x.results, line)
	if !ok {
		x.failed = append(x.failed, line)
	}
}

func heading(s string) { fmt.Printf("\n=== %s\n", s) }

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "installtest:", err)
	return 1
}

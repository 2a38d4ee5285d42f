package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcplugins/framework-plugins/webhook"
)

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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

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

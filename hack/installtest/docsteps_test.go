package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadDocSteps(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "install.md")
	if err := os.WriteFile(doc, []byte(`# Install
### Onto an existing Volcano

Text.

`+"```sh"+`
# 0. first
kubectl patch a \
  --patch-file b
kubectl rollout status a

# 1. second
helm install x y -n z --wait
`+"```"+`

## Next
`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readDocSteps(doc, "### Onto an existing Volcano")
	if err != nil {
		t.Fatal(err)
	}
	want := docSteps{0: {"kubectl patch a --patch-file b", "kubectl rollout status a"}, 1: {"helm install x y -n z --wait"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if _, err := readDocSteps(doc, "### Missing"); err == nil {
		t.Error("a missing heading: no error")
	}
	cmds, err := got.commands(1, subst{`^helm install x y `, "helm install x /tmp/y.tgz "})
	if err != nil || cmds[0] != "helm install x /tmp/y.tgz -n z --wait" {
		t.Errorf("commands: %q, %v", cmds, err)
	}
	if _, err := got.commands(1, subst{`absent`, "x"}); err == nil {
		t.Error("a substitution that matches nothing: no error")
	}
}

// The install test can run docs/install.md's blocks as written, with Helm
// and without: steps 0 to 3 are there, every substitution it makes matches
// once, and the blocks run nothing but kubectl, helm and timeout.
func TestInstallDocSteps(t *testing.T) {
	var patched []string
	for _, c := range ourComponents {
		if c.patched {
			patched = append(patched, docPatchFile(c.deployment))
		}
	}
	for _, tc := range []struct {
		heading string
		substs  map[int][]string
	}{
		{installHeading, map[int][]string{0: {docRolloutStatus}, 1: {docOurChart}, 2: {docVolcanoChart, docVolcanoValues}, 3: nil}},
		{noHelmHeading, map[int][]string{0: {docRolloutStatus}, 1: nil, 2: append([]string{docRolloutStatus}, patched...), 3: nil}},
	} {
		steps, err := readDocSteps(filepath.Join("..", "..", installDoc), tc.heading)
		if err != nil {
			t.Fatal(err)
		}
		for n, olds := range tc.substs {
			var substs []subst
			for _, old := range olds {
				substs = append(substs, subst{old, "x"})
			}
			if _, err := steps.commands(n, substs...); err != nil {
				t.Errorf("%s: %v", tc.heading, err)
			}
			for _, c := range steps[n] {
				if !strings.HasPrefix(c, "kubectl ") && !strings.HasPrefix(c, "helm ") && !strings.HasPrefix(c, "timeout ") {
					t.Errorf("%s step %d: %q is not a kubectl, helm or timeout command", tc.heading, n, c)
				}
			}
		}
		if len(steps) != 4 {
			t.Errorf("%s: %d steps, want 0 to 3 (the install test runs those)", tc.heading, len(steps))
		}
	}
}

// The README's install block, what users copy, runs steps 0 to 3 as
// install.md's, which the install test runs, word for word; before them it
// sets install.md's variables, adds Volcano's chart repository and pushes
// the images.
func TestREADMEInstallBlock(t *testing.T) {
	doc, err := readDocSteps(filepath.Join("..", "..", installDoc), installHeading)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := readDocSteps(filepath.Join("..", "..", "README.md"), "## Install on your Volcano cluster")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n <= 3; n++ {
		if diff := cmp.Diff(doc[n], readme[n]); diff != "" {
			t.Errorf("step %d: README.md's block differs from %s's (-install.md +README):\n%s", n, installDoc, diff)
		}
	}
	for _, prefix := range append(docVariables(), "helm repo add volcano-sh ", "make images-push IMAGE_REPO=") {
		if !slices.ContainsFunc(readme[-1], func(c string) bool { return strings.HasPrefix(c, prefix) }) {
			t.Errorf("README.md's block has no %q before step 0: %q", prefix, readme[-1])
		}
	}
}

// docVariables are the assignments of install.md's header, which the
// install test sets in its commands' environment (main.go).
func docVariables() []string { return []string{"REGISTRY=", "VOLCANO_VERSION=", "VOLCANO_NAMESPACE="} }

// install.md's header sets exactly the variables the install test sets, and
// its two blocks use no other.
func TestInstallDocVariables(t *testing.T) {
	header, err := readDocSteps(filepath.Join("..", "..", installDoc), "## Before you start")
	if err != nil {
		t.Fatal(err)
	}
	var set []string
	for _, c := range header[-1] {
		name, _, _ := strings.Cut(c, "=")
		set = append(set, name+"=")
	}
	if diff := cmp.Diff(docVariables(), set); diff != "" {
		t.Errorf("the variables of %s's header (-want +got):\n%s", installDoc, diff)
	}
	used := regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	for _, heading := range []string{installHeading, noHelmHeading} {
		steps, err := readDocSteps(filepath.Join("..", "..", installDoc), heading)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmds := range steps {
			for _, c := range cmds {
				for _, m := range used.FindAllStringSubmatch(c, -1) {
					if !slices.Contains(set, m[1]+"=") {
						t.Errorf("%s: %q uses $%s, which the header does not set", heading, c, m[1])
					}
				}
			}
		}
	}
}

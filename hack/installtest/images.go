package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

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

// Package installer holds what installs this project onto a Volcano cluster;
// it has no Go API. Its tests check the committed manifests:
//
//   - framework-plugins.yaml, the Helm chart helm/framework-plugins rendered
//     with its default values (make manifests), against the webhook
//     configurations package webhook builds and the RBAC Volcano's chart grants;
//   - helm/volcano-values.yaml against Volcano's chart values (of the
//     volcano.sh/volcano version in go.mod, v1.15.1) and the
//     Pod Security Standard "restricted";
//   - volcano-patches/*.yaml, the same for kubectl, against the Deployments of
//     Volcano's volcano-development.yaml.
//
// gen-admission-secret is the program that stands in for Volcano's
// gen-admission-secret.sh in the vc-webhook-manager image; the images are
// built by hack/tools/images (make images, make images-push). docs/install.md
// describes the installation.
package installer

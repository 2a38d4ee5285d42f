package apiflags

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"

	controller "volcano.sh/volcano/cmd/controller-manager/app/options"
	webhook "volcano.sh/volcano/cmd/webhook-manager/app/options"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// Both managers' options get 500/1000 unless the command line says otherwise.
func TestSetDefaults(t *testing.T) {
	type limits struct {
		QPS   float32
		Burst int
	}
	cases := map[string]struct {
		args []string
		want limits
	}{
		"defaults":     {want: limits{500, 1000}},
		"command line": {args: []string{"--kube-api-qps=20", "--kube-api-burst=30"}, want: limits{20, 30}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := controller.NewServerOption()
			fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
			c.AddFlags(fs, nil)
			SetDefaults(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, limits{c.KubeClientOptions.QPS, c.KubeClientOptions.Burst}); diff != "" {
				t.Errorf("vc-controller-manager (-want +got):\n%s", diff)
			}

			w := webhook.NewConfig()
			fs = pflag.NewFlagSet("webhook", pflag.ContinueOnError)
			w.AddFlags(fs)
			SetDefaults(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, limits{w.KubeClientOptions.QPS, w.KubeClientOptions.Burst}); diff != "" {
				t.Errorf("vc-webhook-manager (-want +got):\n%s", diff)
			}
			if got := fs.Lookup("kube-api-qps").DefValue; got != "500" {
				t.Errorf("help shows default %s, want 500", got)
			}
		})
	}
}

// --gpu-resources sets the one GPU rule both managers apply (jobs.IsGPU).
func TestGPUResources(t *testing.T) {
	defer jobs.SetGPUResources(nil)
	cases := map[string]struct {
		args []string
		want map[v1.ResourceName]bool
	}{
		"default":      {want: map[v1.ResourceName]bool{"nvidia.com/gpu": true, "habana.ai/gaudi": false, "cpu": false}},
		"command line": {args: []string{"--gpu-resources=gaudi,nvidia.com/mig-"}, want: map[v1.ResourceName]bool{"nvidia.com/gpu": false, "habana.ai/gaudi": true, "nvidia.com/mig-1g.5gb": true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
			apply := GPUResources(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			apply()
			got := map[v1.ResourceName]bool{}
			for r := range tc.want {
				got[r] = jobs.IsGPU(r)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("jobs.IsGPU (-want +got):\n%s", diff)
			}
		})
	}
}

// --cluster-domain sets the domain both managers name hosts in
// (jobs.ClusterDomain); a value that is not a DNS name of at most
// jobs.MaxClusterDomainLength characters is refused, naming the flag, and
// changes nothing.
func TestClusterDomain(t *testing.T) {
	defer func() { _ = jobs.SetClusterDomain("") }()
	cases := map[string]struct {
		args    []string
		want    string
		wantErr string
	}{
		"default":      {want: "cluster.local"},
		"command line": {args: []string{"--cluster-domain=corp.example"}, want: "corp.example"},
		"trailing dot": {args: []string{"--cluster-domain=corp.example."}, want: "cluster.local",
			wantErr: `--cluster-domain="corp.example.": must be a DNS name (RFC 1123 subdomain: lowercase letters, digits, '-' and '.'; no trailing dot), such as cluster.local`},
		"upper case": {args: []string{"--cluster-domain=Corp"}, want: "cluster.local",
			wantErr: `--cluster-domain="Corp": must be a DNS name (RFC 1123 subdomain: lowercase letters, digits, '-' and '.'; no trailing dot), such as cluster.local`},
		"too long": {args: []string{"--cluster-domain=" + strings.Repeat("d", 58)}, want: "cluster.local",
			wantErr: `--cluster-domain="` + strings.Repeat("d", 58) + `": must be at most 57 characters, so that <hostname>.<subdomain>.<namespace>.svc.<cluster domain> is a DNS name`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_ = jobs.SetClusterDomain("")
			fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
			apply := ClusterDomain(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			gotErr := ""
			if err := apply(); err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got := jobs.ClusterDomain(); got != tc.want {
				t.Errorf("jobs.ClusterDomain() = %q, want %q", got, tc.want)
			}
		})
	}
}

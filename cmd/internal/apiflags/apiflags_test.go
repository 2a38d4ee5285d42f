package apiflags

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	controller "volcano.sh/volcano/cmd/controller-manager/app/options"
	webhook "volcano.sh/volcano/cmd/webhook-manager/app/options"
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

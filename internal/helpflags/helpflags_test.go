package helpflags

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	out := `Usage of vc-webhook-manager:
      --admission-conf string                       The configmap file of this webhook
      --enable-healthz                              Enable the health check; it is false by default
      --kube-api-qps float32                        QPS to use while talking with kubernetes apiserver (default 500)
      --scheduler-name strings                      Volcano will handle pods whose .spec.SchedulerName is same as scheduler-name (default [volcano])
  -v, --v Level                                     number for the log level verbosity
      --strict-plugin-arguments                     Deny a job whose only problems are
                                                    in its arguments.
`
	want := map[string]Spec{
		"admission-conf":          {Type: "string", Usage: "The configmap file of this webhook"},
		"enable-healthz":          {Usage: "Enable the health check; it is false by default"},
		"kube-api-qps":            {Type: "float32", Default: "500", Usage: "QPS to use while talking with kubernetes apiserver"},
		"scheduler-name":          {Type: "strings", Default: "[volcano]", Usage: "Volcano will handle pods whose .spec.SchedulerName is same as scheduler-name"},
		"v":                       {Type: "Level", Usage: "number for the log level verbosity"},
		"strict-plugin-arguments": {Usage: "Deny a job whose only problems are in its arguments."},
	}
	if diff := cmp.Diff(want, Parse([]byte(out))); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

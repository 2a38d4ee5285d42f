package webhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	webhookerrors "k8s.io/apiserver/pkg/admission/plugin/webhook/errors"

	wkconfig "volcano.sh/volcano/pkg/webhooks/config"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

// Strict mode denies exactly the Jobs admitted with argument warnings, with
// the warnings' problems as the message; other Jobs are answered alike.
func TestStrictArguments(t *testing.T) {
	defer SetStrictArguments(nil)
	warned := mkJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow", "--port=70000", "--bogus").Plugin("svc").Obj()
	valid := mkJob("pt").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("pytorch").Plugin("svc").Obj()
	denied := mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mxnet", "--port=70000").Plugin("svc").Obj()

	answer := func(strict bool, job string) (allowed bool, message string, warnings []string) {
		SetStrictArguments(func() bool { return strict })
		j := valid
		switch job {
		case "warned":
			j = warned
		case "denied":
			j = denied
		}
		resp := ValidateService().Func(review(t, admissionv1.Create, j, nil))
		if resp.Result != nil {
			message = webhookerrors.ToStatusErr(ValidateWebhookName, resp.Result).Error()
		}
		return resp.Allowed, message, resp.Warnings
	}
	ok, _, warnings := answer(false, "warned")
	if !ok || len(warnings) != 3 || warnings[0] != ArgumentsWarning {
		t.Fatalf("not strict: allowed %v, warnings %q; want allowed with ArgumentsWarning and two problems", ok, warnings)
	}
	ok, message, _ := answer(true, "warned")
	want := `admission webhook "validatejob.frameworks.vcplugins.io" denied the request: [` + warnings[1] + ", " + warnings[2] + "]"
	if ok || message != want {
		t.Errorf("strict: allowed %v, message\n got %s\nwant %s", ok, message, want)
	}
	for _, job := range []string{"valid", "denied"} {
		ok1, m1, w1 := answer(false, job)
		ok2, m2, w2 := answer(true, job)
		if diff := cmp.Diff([]any{ok1, m1, w1}, []any{ok2, m2, w2}); diff != "" {
			t.Errorf("%s job: strict mode changed the answer (-not strict +strict):\n%s", job, diff)
		}
	}
}

// StrictArgumentsFrom: the flag, else the file's key, read at each call; a
// file that cannot be read or parsed is not strict.
func TestStrictArgumentsFrom(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "admission.conf")
	tests := []struct {
		name    string
		flag    bool
		content *string
		want    bool
	}{
		{"flag", true, nil, true},
		{"no file", false, nil, false},
		{"key true", false, text("resourceGroups: []\nstrictPluginArguments: true\n"), true},
		{"key false", false, text("strictPluginArguments: false\n"), false},
		{"Volcano's default file, comments only", false, text("#resourceGroups:\n#- resourceGroup: management\n"), false},
		{"flag wins over the file", true, text("strictPluginArguments: false\n"), true},
		{"not YAML", false, text("strictPluginArguments: [\n"), false},
		{"not a boolean", false, text("strictPluginArguments: maybe\n"), false},
		{"over 1 MiB", false, text("strictPluginArguments: true\n#" + strings.Repeat("x", maxAdmissionConfBytes)), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(file)
			if tc.content != nil {
				if err := os.WriteFile(file, []byte(*tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := StrictArgumentsFrom(tc.flag, file)(); got != tc.want {
				t.Errorf("strict = %v, want %v", got, tc.want)
			}
		})
	}
	// Read at each call: a change applies without a new function.
	strict := StrictArgumentsFrom(false, file)
	for _, on := range []bool{true, false, true} {
		content := "strictPluginArguments: false\n"
		if on {
			content = "strictPluginArguments: true\n"
		}
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := strict(); got != on {
			t.Errorf("after writing %q: strict = %v", content, got)
		}
	}
	if StrictArgumentsFrom(false, "")() {
		t.Error("no file and no flag: strict")
	}
}

func text(s string) *string { return &s }

// Volcano's own reading of the admission configuration file (its resource
// groups) accepts the file with the strict-mode key beside them.
func TestStrictArgumentsKeyVolcanoReadsTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "volcano-admission.conf")
	conf := "resourceGroups:\n- resourceGroup: gpu\n  schedulerName: volcano\n" + StrictArgumentsKey + ": true\n"
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	got := wkconfig.LoadAdmissionConf(file)
	if got == nil || len(got.ResGroupsConfig) != 1 || got.ResGroupsConfig[0].ResourceGroup != "gpu" {
		t.Fatalf("Volcano's LoadAdmissionConf = %+v, want its one resource group", got)
	}
	if !StrictArgumentsFrom(false, file)() {
		t.Error("strict mode off")
	}
}

package kubeutil

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestYAMLDocuments(t *testing.T) {
	type m = map[string]any
	cases := []struct {
		name    string
		in      string
		want    []any // each document, decoded
		wantErr bool
	}{
		{
			name: "leading separator and empty documents",
			in:   "---\na: 1\n---\n\n---\nb: 2\n",
			want: []any{m{"a": 1.0}, m{"b": 2.0}},
		},
		{
			name: "comment-only documents and a commented separator",
			in:   "# Source: chart/templates/a.yaml\n--- # first\na: 1\n---\n# nothing here\n",
			want: []any{m{"a": 1.0}},
		},
		{
			name: "--- in a block scalar and in a string is content",
			in:   "---\ndescription: |\n  above\n  ---\n  below\nnote: \"a\\n--- b\"\n---\nc: 3",
			want: []any{m{"description": "above\n---\nbelow\n", "note": "a\n--- b"}, m{"c": 3.0}},
		},
		{
			name:    "a separator followed by more than a comment",
			in:      "a: 1\n--- b: 2\n",
			wantErr: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := YAMLDocuments([]byte(tc.in))
			if gotErr := err != nil; gotErr != tc.wantErr {
				t.Fatalf("error = %v, want error: %v", err, tc.wantErr)
			}
			var got []any
			for _, d := range docs {
				var v any
				if err := yaml.Unmarshal(d, &v); err != nil {
					t.Fatalf("document %q: %v", d, err)
				}
				got = append(got, v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("documents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvOf(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "wait", Env: []corev1.EnvVar{{Name: "WAIT_TARGETS", Value: "a:1"}}}},
		Containers: []corev1.Container{
			{Name: "main", Env: []corev1.EnvVar{
				{Name: "RANK", Value: "0"},
				{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
				{Name: "EMPTY"},
			}},
			{Name: "sidecar"},
		},
	}}
	for _, tc := range []struct {
		container string
		want      map[string]string
	}{
		{"main", map[string]string{"RANK": "0", "EMPTY": ""}},
		{"wait", map[string]string{"WAIT_TARGETS": "a:1"}},
		{"sidecar", map[string]string{}},
		{"none", nil},
	} {
		got := EnvOf(pod, tc.container)
		if diff := cmp.Diff(tc.want, got); diff != "" || (got == nil) != (tc.want == nil) {
			t.Errorf("EnvOf(%q) (-want +got), nil %v:\n%s", tc.container, got == nil, diff)
		}
	}
}

func TestWarnings(t *testing.T) {
	var b bytes.Buffer
	w := Warnings{Out: &b, Prefix: "warning: "}
	w.HandleWarningHeader(299, "", `unknown field "spec.tasks[0].template.metadata.creationTimestamp"`)
	w.HandleWarningHeader(299, "", `unknown field "spec.jobTemplate.spec.tasks[1].template.metadata.creationTimestamp"`)
	w.HandleWarningHeader(299, "", `unknown field "spec.tasks[0].templat"`)
	w.HandleWarningHeader(299, "", "plugin svc: environment variable VC_WORKER_HOSTS would be 140000 bytes")
	want := "warning: unknown field \"spec.tasks[0].templat\"\nwarning: plugin svc: environment variable VC_WORKER_HOSTS would be 140000 bytes\n"
	if b.String() != want {
		t.Errorf("written %q, want %q", b.String(), want)
	}
}

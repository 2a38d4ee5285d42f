package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
)

func TestCodeBlocks(t *testing.T) {
	md := "# Title\n" +
		"```yaml\na: 1\n```\n" + // 2
		"text ```inline``` text\n" +
		"1. step\n" +
		"   ```yml\n   b:\n     c: 2\n   ```\n" + // 7
		"~~~~ YAML extra\nd: 3\n~~~\n```\n~~~~\n" + // 11: a shorter and another fence do not close it
		"````\nx\n```\n````\n" + // 16
		"```\nunterminated\n" // 20
	got := CodeBlocks([]byte(md))
	want := []CodeBlock{
		{Line: 2, Lang: "yaml", Text: "a: 1\n"},
		{Line: 7, Lang: "yml", Text: "b:\n  c: 2\n"},
		{Line: 11, Lang: "yaml", Text: "d: 3\n~~~\n```\n"},
		{Line: 16, Lang: "", Text: "x\n```\n"},
		{Line: 20, Lang: "", Text: "unterminated\n\n"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CodeBlocks (-want +got):\n%s", diff)
	}
}

func TestYAMLDocumentsAndIsVolcanoJob(t *testing.T) {
	docs, err := kubeutil.YAMLDocuments([]byte("# only a comment\n---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n---\napiVersion: batch/v1\nkind: Job\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2: %q", len(docs), docs)
	}
	if !IsVolcanoJob(docs[0]) || IsVolcanoJob(docs[1]) {
		t.Errorf("IsVolcanoJob: %v %v, want true false", IsVolcanoJob(docs[0]), IsVolcanoJob(docs[1]))
	}
	if _, err := DecodeJob([]byte("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec:\n  taks: []\n"), "x"); err == nil {
		t.Error("DecodeJob accepted an unknown field")
	}
}

package docs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// maxUserDocLines bounds the user docs: README.md, docs/*.md and
// docs/plugins/*.md, counted as `cat README.md docs/*.md docs/plugins/*.md |
// wc -l` counts them (newlines). docs/dev/ is the developers' record and not
// counted.
const maxUserDocLines = 4500

// userDocs are the globs of the user docs, relative to this directory.
var userDocs = []string{"../README.md", "*.md", "plugins/*.md"}

// The user docs stay short enough to be read: the development record
// (measurements, run logs, review findings) belongs in docs/dev/, and what
// several pages would repeat is said once and linked.
func TestUserDocsLength(t *testing.T) {
	total := 0
	for _, g := range userDocs {
		files, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no file matches %s", g)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			total += bytes.Count(raw, []byte("\n"))
		}
	}
	if total >= maxUserDocLines {
		t.Errorf("the user docs (README.md, docs/*.md, docs/plugins/*.md) have %d lines, over the %d they may have: "+
			"move development record (run logs, measurements, review findings, release steps) to docs/dev/ and link it in one line, "+
			"say what several pages repeat once (concepts.md) and link it, or shorten what you added", total, maxUserDocLines)
	}
}

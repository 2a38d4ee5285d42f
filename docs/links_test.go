package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// linkedDocs are the Markdown files whose relative links are checked,
// relative to this directory: the user docs and the development record.
var linkedDocs = []string{"../README.md", "*.md", "plugins/*.md", "dev/*.md"}

// mdLink matches a Markdown link's target: ](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown document (fenced code skipped): lower case, every character but
// letters, digits, '_', '-' and spaces dropped, spaces as '-', and "-1",
// "-2", ... appended to repeats.
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if len(text) == len(line) || len(line)-len(text) > 6 || !strings.HasPrefix(text, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '_', r == '-':
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n, ok := seen[a]; ok {
			seen[a] = n + 1
			a = fmt.Sprintf("%s-%d", a, n+1)
		} else {
			seen[a] = 0
		}
		anchors[a] = true
	}
	return anchors
}

// Every relative link of the docs names a file that exists and, when it has
// an #anchor into a Markdown file, a heading of that file: moving a section
// to docs/dev/ or renaming a heading must take the links along.
func TestDocLinks(t *testing.T) {
	var files []string
	for _, g := range linkedDocs {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		anchors[file] = headingAnchors(string(raw))
		return anchors[file]
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inCode := false
		for n, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
				continue
			}
			if inCode {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(resolved); err != nil {
						t.Errorf("%s:%d: link %s: no file %s", file, n+1, target, resolved)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(resolved, ".md") && !anchorsOf(resolved)[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading with anchor #%s", file, n+1, target, resolved, anchor)
				}
			}
		}
	}
}

func TestHeadingAnchors(t *testing.T) {
	doc := "# Title\n## What the pod spec holds: `--tf-config=auto` (the default)\n```\n# not a heading\n```\n### Title\n## What happens when…\n#nospace\n"
	got := headingAnchors(doc)
	for _, want := range []string{"title", "what-the-pod-spec-holds---tf-configauto-the-default", "title-1", "what-happens-when"} {
		if !got[want] {
			t.Errorf("anchor %q missing from %v", want, got)
		}
	}
	if got["not-a-heading"] || got["nospace"] {
		t.Errorf("anchors of non-headings: %v", got)
	}
}

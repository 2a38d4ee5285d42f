package installer

import (
	"go/version"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// minToolchain is the oldest Go that builds of this module may fall back
// to: the newest go1.25 patch the module proxy served when it was set. With
// GOTOOLCHAIN=auto (Go's default), a Go older than the module's go line
// fetches the toolchain line's release (or, without one, exactly the go
// line's, go1.25.0, without the 1.25.x security releases).
const minToolchain = "go1.25.14"

// Every module file the images are built from names a toolchain of at least
// minToolchain (security round 4, L3).
func TestModuleToolchain(t *testing.T) {
	mods, err := filepath.Glob(filepath.Join("..", "lines", "*.mod"))
	if err != nil {
		t.Fatal(err)
	}
	toolchain := regexp.MustCompile(`(?m)^toolchain[ \t]+(go[0-9.]+)[ \t]*$`)
	for _, f := range append([]string{filepath.Join("..", "go.mod")}, mods...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := toolchain.FindSubmatch(data)
		if m == nil {
			t.Errorf("%s has no toolchain line: a build that fetches Go takes its go line's release (.0)", f)
			continue
		}
		if got := string(m[1]); !version.IsValid(got) || version.Compare(got, minToolchain) < 0 {
			t.Errorf("%s: toolchain %s, want %s or later", f, got, minToolchain)
		}
	}
}

package installer

import (
	"go/version"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// digestRef matches an image reference pinned by digest.
var digestRef = regexp.MustCompile(`^[^@\s]+@sha256:[0-9a-f]{64}$`)

// Every stage of the Dockerfiles starts from an image pinned by digest (the
// ARG defaults the FROM lines name, expanded), so that a moved tag cannot
// change what is built or shipped.
func TestDockerfileBaseImagesPinnedByDigest(t *testing.T) {
	files, err := filepath.Glob("docker/*.Dockerfile")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Dockerfiles: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		args := map[string]string{}
		froms := 0
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 2 {
				continue
			}
			switch strings.ToUpper(fields[0]) {
			case "ARG":
				if k, v, ok := strings.Cut(fields[1], "="); ok {
					args[k] = v
				}
			case "FROM":
				froms++
				from := fields[1]
				if strings.HasPrefix(from, "--platform=") && len(fields) > 2 {
					from = fields[2]
				}
				if image := os.Expand(from, func(k string) string { return args[k] }); !digestRef.MatchString(image) {
					t.Errorf("%s: FROM %s (%s) is not pinned by digest", f, from, image)
				}
			}
		}
		if froms == 0 {
			t.Errorf("%s has no FROM", f)
		}
	}
}

// Both Dockerfiles can build their line (security round 4, L3): go.mod
// replaces volcano.sh/apis with _output/volcano-apis, which the context
// leaves out (.dockerignore), so lines/volcano-apis.sh must make it before
// go build; and make images LINE=... passes --build-arg LINE_GOFLAGS, which
// go build must use.
func TestDockerfilesBuildTheLine(t *testing.T) {
	files, err := filepath.Glob("docker/*.Dockerfile")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Dockerfiles: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Continuation lines joined, so that each instruction is one line.
		text := strings.ReplaceAll(string(data), "\\\n", " ")
		apis, build, arg, flags := -1, -1, -1, false
		for i, line := range strings.Split(text, "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			switch strings.ToUpper(fields[0]) {
			case "ARG":
				if len(fields) > 1 && strings.HasPrefix(fields[1], "LINE_GOFLAGS") {
					arg = i
				}
			case "RUN":
				if strings.Contains(line, "bash lines/volcano-apis.sh") && apis < 0 {
					apis = i
				}
				if strings.Contains(line, "go build") {
					if build < 0 {
						build = i
					}
					flags = flags || regexp.MustCompile(`GOFLAGS="[^"]*\$\{?LINE_GOFLAGS\}?`).MatchString(line)
				}
			}
		}
		if apis < 0 || build < 0 || apis > build {
			t.Errorf("%s: no RUN bash lines/volcano-apis.sh before go build (lines %d, %d)", f, apis, build)
		}
		if arg < 0 || arg > build {
			t.Errorf("%s: no ARG LINE_GOFLAGS before go build", f)
		}
		if !flags {
			t.Errorf("%s: go build does not put $LINE_GOFLAGS in GOFLAGS", f)
		}
		ignore, err := os.ReadFile(f + ".dockerignore")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(strings.Fields(string(ignore)), "_output") {
			t.Errorf("%s.dockerignore does not leave out _output (a host's volcano-apis or binaries)", f)
		}
	}
}

// minToolchain is the oldest Go the Docker builds may use: the newest go1.25
// patch the module proxy served when it was set. The Dockerfiles run
// GOTOOLCHAIN=auto, which fetches go.mod's toolchain line (or, without one,
// exactly its go line, go1.25.0, without the 1.25.x security releases).
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
			t.Errorf("%s has no toolchain line: image builds use its go line's release (.0)", f)
			continue
		}
		if got := string(m[1]); !version.IsValid(got) || version.Compare(got, minToolchain) < 0 {
			t.Errorf("%s: toolchain %s, want %s or later", f, got, minToolchain)
		}
	}
}

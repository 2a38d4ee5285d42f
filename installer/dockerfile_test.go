package installer

import (
	"os"
	"path/filepath"
	"regexp"
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

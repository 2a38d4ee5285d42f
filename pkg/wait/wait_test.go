package wait

import (
	"testing"

	"github.com/distribution/reference"
)

// The default wait image is pinned: a tag alone lets whoever pushes to it
// change what every Job's init containers run.
func TestBuiltinImageIsPinnedByDigest(t *testing.T) {
	named, err := reference.ParseNormalizedNamed(BuiltinImage)
	if err != nil {
		t.Fatalf("BuiltinImage %q: %v", BuiltinImage, err)
	}
	if got, want := named.Name(), "docker.io/library/busybox"; got != want {
		t.Errorf("BuiltinImage names %s, want %s", got, want)
	}
	digested, ok := named.(reference.Digested)
	if !ok {
		t.Fatalf("BuiltinImage %q has no digest", BuiltinImage)
	}
	if err := digested.Digest().Validate(); err != nil {
		t.Errorf("BuiltinImage's digest: %v", err)
	}
	if tagged, ok := named.(reference.Tagged); !ok || tagged.Tag() != "1.36.1" {
		t.Errorf("BuiltinImage %q should keep the tag 1.36.1 for readers", BuiltinImage)
	}
}

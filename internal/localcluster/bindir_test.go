package localcluster

import (
	"path/filepath"
	"testing"
)

// The e2e suite's cluster takes its binaries from EnvBinDir when set (make
// test-e2e KUBE=...); a Config's own BinDir still wins.
func TestBinDirFromEnvironment(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv(EnvBinDir, "_output/kube-v1.36.3/bin")
	cfg, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "_output", "kube-v1.36.3", "bin"); cfg.BinDir != want {
		t.Errorf("BinDir with %s set = %s, want %s", EnvBinDir, cfg.BinDir, want)
	}
	cfg, err = Config{RootDir: "/x", BinDir: "/y"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BinDir != "/y" {
		t.Errorf("BinDir given and %s set = %s, want /y", EnvBinDir, cfg.BinDir)
	}
	t.Setenv(EnvBinDir, "")
	cfg, err = Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "_output", "bin"); cfg.BinDir != want {
		t.Errorf("BinDir with %s empty = %s, want %s", EnvBinDir, cfg.BinDir, want)
	}
}

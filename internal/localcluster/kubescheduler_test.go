package localcluster

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBinariesKubeScheduler checks that kube-scheduler is required (and run)
// beside Volcano's scheduler only with Config.KubeScheduler, and in place of
// it with Config.NoVolcano.
func TestBinariesKubeScheduler(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{Etcd, KubeAPIServer, KubeControllerManager, Kwok, Scheduler, ControllerManager, WebhookManager, KubeScheduler} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name                      string
		cfg                       Config
		kubeScheduler, volcanoSch bool
	}{
		{"default", Config{}, false, true},
		{"KubeScheduler", Config{KubeScheduler: true}, true, true},
		{"NoVolcano", Config{NoVolcano: true}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.RootDir, cfg.BinDir = t.TempDir(), dir
			cfg, err := cfg.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			u := &upper{cfg: cfg}
			bins, err := u.binaries()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := bins[KubeScheduler]; ok != c.kubeScheduler {
				t.Errorf("kube-scheduler in the binaries: %v, want %v", ok, c.kubeScheduler)
			}
			if _, ok := bins[Scheduler]; ok != c.volcanoSch {
				t.Errorf("vc-scheduler in the binaries: %v, want %v", ok, c.volcanoSch)
			}
			if err := os.Remove(filepath.Join(dir, KubeScheduler)); err != nil {
				t.Fatal(err)
			}
			_, err = (&upper{cfg: cfg}).binaries()
			if (err != nil) != c.kubeScheduler {
				t.Errorf("without kube-scheduler's binary: error %v, want one: %v", err, c.kubeScheduler)
			}
			if err := os.WriteFile(filepath.Join(dir, KubeScheduler), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		})
	}
}

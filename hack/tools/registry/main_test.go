package main

import (
	"context"
	"io"
	"log"
	"net"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:5000": true, "[::1]:5000": true, "0.0.0.0:5000": false,
		":5000": false, "10.0.0.1:5000": false, "localhost:5000": false, "127.0.0.1": false,
	} {
		if err := checkAddr(addr); (err == nil) != ok {
			t.Errorf("checkAddr(%q) = %v; want ok %v", addr, err, ok)
		}
	}
}

// An image pushed by digest comes back the same, its blobs from --dir, and
// the registry stops when its context ends.
func TestServePushPull(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, addr, t.TempDir(), log.New(io.Discard, "", 0)) }()

	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag(addr + "/framework-plugins/test:v1")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err = remote.Write(ref, img); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	want, _ := img.Digest()
	got, err := remote.Image(ref.Context().Digest(want.String()))
	if err != nil {
		t.Fatalf("pull by digest: %v", err)
	}
	if d, _ := got.Digest(); d != want {
		t.Errorf("pulled %v, pushed %v", d, want)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("serve still running 10 s after its context ended")
	}
}

package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The image CI builds: a static binary from this checkout, the tarball under
// 50 MB, a non-root user, no shell, and `pml version` answers when run from
// the image's own filesystem (no container runtime runs on the build
// machine: docs/deploy.md).
func TestImage(t *testing.T) {
	bin := os.Getenv("PML_IMAGE_BINARY")
	if bin == "" {
		if os.Getenv("PML_REQUIRE_IMAGE") == "1" {
			t.Fatal("PML_IMAGE_BINARY is not set (deploy/image/check.sh sets it)")
		}
		t.Skip("PML_IMAGE_BINARY is not set: run deploy/image/check.sh")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "pml.tar")
	if err := build(bin, "/etc/ssl/certs/ca-certificates.crt", "pml:test", out); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image tarball: %.1f MB", float64(st.Size())/1e6)
	if st.Size() >= 50<<20 {
		t.Errorf("image %d bytes, want well under 50 MB", st.Size())
	}
	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if u := cfg.Config.User; u == "" || strings.HasPrefix(u, "0") || strings.HasPrefix(u, "root") {
		t.Errorf("runs as %q", u)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "rootfs")
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		extract(t, rc, root)
		rc.Close()
	}
	for _, shell := range []string{"bin/sh", "bin/bash", "bin/busybox", "usr/bin/sh"} {
		if _, err := os.Stat(filepath.Join(root, shell)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the image has %s", shell)
		}
	}
	entry := filepath.Join(root, strings.TrimPrefix(cfg.Config.Entrypoint[0], "/"))
	outv, err := exec.Command(entry, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(outv), "pml ") || !strings.Contains(string(outv), "QuickJS") {
		t.Fatalf("pml version from the image: %v\n%s", err, outv)
	}
	t.Logf("from the image:\n%s", outv)
}

func extract(t *testing.T, r io.Reader, root string) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
}

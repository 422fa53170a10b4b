// Command image builds the gateway's container image without a container
// daemon (docs/deploy.md): one layer on an empty base holding the static
// pml binary, CA certificates, /etc/passwd naming the non-root user 65532,
// and an empty /tmp; no shell, no package manager. It writes a tarball that
// `docker load` and `podman load` take, and registries accept through
// `crane push`.
//
// Usage: go run . -binary PATH -certs /etc/ssl/certs/ca-certificates.crt -tag pml:0.1.0 -out pml.tar
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonroot is the user the gateway runs as (the distroless convention).
const nonroot = "65532"

func main() {
	binary := flag.String("binary", "", "the static pml binary (CGO_ENABLED=0)")
	certs := flag.String("certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle for HTTPS upstreams and issuers")
	tag := flag.String("tag", "pml:dev", "the image's name and tag")
	out := flag.String("out", "pml.tar", "where to write the image tarball")
	flag.Parse()
	if err := build(*binary, *certs, *tag, *out); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func build(binary, certs, tag, out string) error {
	img, err := Image(binary, certs)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	return tarball.WriteToFile(out, ref, img)
}

// Image is the gateway image of the binary at binary.
func Image(binary, certs string) (v1.Image, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("reading the binary: %w", err)
	}
	ca, err := os.ReadFile(certs)
	if err != nil {
		return nil, fmt.Errorf("reading the CA bundle: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, ModTime: epoch})
	}
	file := func(name string, mode int64, body []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body)), ModTime: epoch}); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	steps := []func() error{
		func() error { return dir("etc/", 0o755) },
		func() error { return dir("etc/ssl/", 0o755) },
		func() error { return dir("etc/ssl/certs/", 0o755) },
		func() error { return dir("tmp/", 0o1777) },
		func() error {
			return file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"))
		},
		func() error { return file("etc/group", 0o644, []byte("root:x:0:\nnonroot:x:65532:\n")) },
		func() error { return file("etc/ssl/certs/ca-certificates.crt", 0o644, ca) },
		func() error { return file("pml", 0o755, bin) },
		tw.Close,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("writing the layer: %w", err)
		}
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.User = nonroot + ":" + nonroot
	cfg.Config.Entrypoint = []string{"/pml"}
	cfg.Config.Cmd = []string{"gateway", "--addr", "0.0.0.0:8080"}
	cfg.Config.Env = []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "HOME=/tmp"}
	cfg.Config.ExposedPorts = map[string]struct{}{"8080/tcp": {}, "9464/tcp": {}}
	cfg.Config.Labels = map[string]string{"org.opencontainers.image.title": "pml", "org.opencontainers.image.description": "PML gateway"}
	return mutate.ConfigFile(img, cfg)
}

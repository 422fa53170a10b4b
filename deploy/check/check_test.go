// Package check tests what deploy/ ships (docs/deploy.md): every manifest
// the Helm chart renders decodes strictly into the Kubernetes API types, so
// an unknown or misspelled field fails, and holds what a rolling update and
// a locked-down pod need; the Grafana dashboard queries only series the
// gateway exports. A module of its own, so that the Kubernetes API types
// stay out of the gateway's dependencies.
package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const chart = "../helm/pml"

// helm finds the helm binary; without it the chart tests skip, unless
// PML_REQUIRE_HELM=1 (CI) makes that a failure.
func helm(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	if p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "helm"); fileExists(p) {
		return p
	}
	if os.Getenv("PML_REQUIRE_HELM") == "1" {
		t.Fatal("helm is missing (.ci/run installs it)")
	}
	t.Skip("helm is missing")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func render(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helm(t), append([]string{"template", "rel", chart}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return errb.String(), err
	}
	return out.String(), nil
}

// decodeStrict decodes one manifest into its Kubernetes type, refusing
// fields the type does not have.
func decodeStrict(doc []byte) (any, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var head struct{ Kind string }
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, err
	}
	var obj any
	switch head.Kind {
	case "Deployment":
		obj = &appsv1.Deployment{}
	case "Service":
		obj = &corev1.Service{}
	case "Secret":
		obj = &corev1.Secret{}
	case "PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	default:
		return nil, fmt.Errorf("kind %q is not expected from this chart", head.Kind)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		return nil, fmt.Errorf("%s: %w", head.Kind, err)
	}
	return obj, nil
}

func manifests(t *testing.T, rendered string) []any {
	t.Helper()
	var out []any
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(rendered, -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		obj, err := decodeStrict([]byte(doc))
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		out = append(out, obj)
	}
	return out
}

func stripComments(doc string) string {
	var keep []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestChartRendersStrictManifests(t *testing.T) {
	rendered, err := render(t, "--set", "database.url=postgres://pml:x@db.invalid:5432/pml",
		"--set", "config.routing.server[0]=git:log")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, rendered)
	}
	var dep *appsv1.Deployment
	var pdb *policyv1.PodDisruptionBudget
	kinds := map[string]int{}
	for _, obj := range manifests(t, rendered) {
		switch o := obj.(type) {
		case *appsv1.Deployment:
			dep = o
		case *policyv1.PodDisruptionBudget:
			pdb = o
		}
		kinds[fmt.Sprintf("%T", obj)]++
	}
	if dep == nil || pdb == nil || kinds["*v1.Service"] != 2 || kinds["*v1.Secret"] != 2 {
		t.Fatalf("rendered kinds %v", kinds)
	}
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %s, readiness %s", c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
	}
	sc := c.SecurityContext
	if pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		pod.SecurityContext.SeccompProfile == nil || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("security contexts: pod %+v, container %+v", pod.SecurityContext, sc)
	}
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("the PodDisruptionBudget selects %s=%s, which the pods do not carry", k, v)
		}
	}
	args := strings.Join(c.Args, " ")
	delay, grace := argDuration(t, args, "--shutdown-delay="), argDuration(t, args, "--shutdown-grace=")
	if tg := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second; tg < delay+grace+5*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v does not cover the drain (%v + %v)", tg, delay, grace)
	}
	if !strings.Contains(args, "--db=$(PML_DB)") || c.Env[0].ValueFrom.SecretKeyRef == nil || !strings.Contains(args, "--config=/etc/pml/config.json") {
		t.Errorf("the database URL and config do not come from Secrets: %s %+v", args, c.Env)
	}
	if c.Resources.Limits.Memory().IsZero() {
		t.Errorf("no memory limit: admission derives its defaults from it")
	}
	if ru := dep.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("a rolling update may take a replica down before its successor is ready: %+v", ru)
	}
}

func argDuration(t *testing.T, args, flag string) time.Duration {
	t.Helper()
	i := strings.Index(args, flag)
	if i < 0 {
		t.Fatalf("no %s in %s", flag, args)
	}
	v := strings.Fields(args[i+len(flag):])[0]
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s%s: %v", flag, v, err)
	}
	return d
}

// A chart without a database is refused with the reason.
func TestChartNeedsADatabase(t *testing.T) {
	out, err := render(t)
	if err == nil || !strings.Contains(out, "database.url") {
		t.Fatalf("rendered without a database: %v\n%s", err, out)
	}
	if out, err := render(t, "--set", "database.existingSecret=pg-app"); err != nil {
		t.Fatalf("with an existing secret: %v\n%s", err, out)
	}
}

func TestLint(t *testing.T) {
	out, err := exec.Command(helm(t), "lint", chart, "--set", "database.url=postgres://db.invalid/pml").CombinedOutput()
	if err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
}

// The strict decoder is what catches a misspelled field.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	good := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: 2\n"
	if _, err := decodeStrict([]byte(good)); err != nil {
		t.Fatalf("a valid manifest: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(good, "replicas", "replica", 1),
		good + "  template:\n    spec:\n      containers:\n        - name: c\n          imagePullPolcy: Always\n",
		"apiVersion: v1\nkind: ConfigMapp\nmetadata:\n  name: x\n",
	} {
		if _, err := decodeStrict([]byte(bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

// The Grafana dashboard parses and queries only series the gateway exports
// (internal/gateway/metrics*.go and the Go and process collectors).
func TestGrafanaDashboardUsesRealSeries(t *testing.T) {
	raw, err := os.ReadFile("../grafana/pml.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil || len(dash.Panels) == 0 {
		t.Fatalf("dashboard JSON: %v (%d panels)", err, len(dash.Panels))
	}
	exported := map[string]bool{}
	sources, _ := filepath.Glob("../../internal/gateway/metrics*.go")
	nameRE := regexp.MustCompile(`"(pml_[a-z_]+)"`)
	for _, f := range sources {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range nameRE.FindAllStringSubmatch(string(src), -1) {
			exported[m[1]] = true
		}
	}
	if len(exported) < 5 {
		t.Fatalf("found only %d series in the gateway's source", len(exported))
	}
	used := regexp.MustCompile(`\b(pml_[a-z_]+|go_[a-z_]+|process_[a-z_]+)`)
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range used.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
				if strings.HasPrefix(m, "pml_") && !exported[base] && !exported[m] {
					t.Errorf("panel %q queries %s, which the gateway does not export", p.Title, m)
				}
			}
		}
	}
}

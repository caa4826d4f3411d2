package deploy

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/ssatd/ssatd/internal/config"
)

// manifests is the kustomize base, built and decoded.
type manifests struct {
	deployment *appsv1.Deployment // the one named ssatd
	service    *corev1.Service    // the one named ssatd
	// deployments and services are all of them by name: an overlay may
	// add its own (the fleet's store).
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	hpa         *autoscalingv2.HorizontalPodAutoscaler
	pdb         *policyv1.PodDisruptionBudget
	configMaps  map[string]*corev1.ConfigMap
	secrets     map[string]*corev1.Secret
}

// kustomizations are the base and the overlays shipped beside it.
var kustomizations = []string{"kubernetes", "overlays/config-in-secret", "overlays/fleet"}

// buildKustomization builds dir as `kubectl apply -k` would and decodes
// every document strictly into its k8s.io/api type: a field the API does
// not know is an error, not a silently ignored line.
func buildKustomization(t *testing.T, dir string) *manifests {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build deploy/%s: %v", dir, err)
	}
	m := &manifests{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{},
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{}}
	for _, r := range resMap.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		id := r.GetApiVersion() + " " + r.GetKind()
		var obj any
		switch id {
		case "apps/v1 Deployment":
			d := &appsv1.Deployment{}
			m.deployments[r.GetName()] = d
			obj = d
		case "v1 Service":
			svc := &corev1.Service{}
			m.services[r.GetName()] = svc
			obj = svc
		case "autoscaling/v2 HorizontalPodAutoscaler":
			obj = set(t, &m.hpa, id)
		case "policy/v1 PodDisruptionBudget":
			obj = set(t, &m.pdb, id)
		case "v1 ConfigMap":
			cm := &corev1.ConfigMap{}
			m.configMaps[r.GetName()] = cm
			obj = cm
		case "v1 Secret":
			s := &corev1.Secret{}
			m.secrets[r.GetName()] = s
			obj = s
		default:
			t.Fatalf("%s %s: no test knows this kind; add it to buildKustomization", id, r.GetName())
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Fatalf("%s %s: %v\n%s", id, r.GetName(), err, doc)
		}
	}
	m.deployment, m.service = m.deployments["ssatd"], m.services["ssatd"]
	if m.deployment == nil || m.service == nil || m.hpa == nil || m.pdb == nil {
		t.Fatalf("the base lacks the Deployment or Service ssatd, a HorizontalPodAutoscaler or PodDisruptionBudget: %+v", m)
	}
	return m
}

// set makes *p a new T, failing when the base already had one.
func set[T any](t *testing.T, p **T, id string) *T {
	t.Helper()
	if *p != nil {
		t.Fatalf("the base has two %s; the tests check one", id)
	}
	*p = new(T)
	return *p
}

// ssatdContainer returns the Deployment's ssatd container.
func ssatdContainer(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	for i := range d.Spec.Template.Spec.Containers {
		if c := &d.Spec.Template.Spec.Containers[i]; c.Name == "ssatd" {
			return c
		}
	}
	t.Fatal("the Deployment has no container named ssatd")
	return nil
}

// containerPort resolves a probe's or Service's target port, named or
// numbered, to the container's port number.
func containerPort(t *testing.T, c *corev1.Container, p intstr.IntOrString) int {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntValue()
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort)
		}
	}
	t.Fatalf("port %q is not a named port of container %s", p.StrVal, c.Name)
	return 0
}

// podConfig loads the configuration the pod runs with: the ConfigMap file
// that SSATD_CONFIG names through its volume mount, with every SSATD_*
// variable of the container (literal and from Secrets) set, as serve does.
// Load refuses an SSATD_* variable that names no key.
func podConfig(t *testing.T, m *manifests, c *corev1.Container) (*config.Config, []string) {
	t.Helper()
	var environ []string
	add := func(name, value string) { environ = append(environ, name+"="+value) }
	var file string
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Errorf("env %s: valueFrom is not checked by this test; use envFrom with a Secret", e.Name)
			continue
		}
		add(e.Name, e.Value)
		if e.Name == "SSATD_CONFIG" {
			file = e.Value
		}
	}
	for _, ef := range c.EnvFrom {
		if ef.SecretRef == nil {
			t.Errorf("envFrom %+v: only Secrets are expected", ef)
			continue
		}
		s, ok := m.secrets[ef.SecretRef.Name]
		if !ok {
			t.Fatalf("envFrom names Secret %s, which the base does not create", ef.SecretRef.Name)
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range s.Data {
				if !yield(k) {
					return
				}
			}
		}) {
			add(ef.Prefix+k, string(s.Data[k]))
		}
	}
	if file == "" {
		t.Fatal("the container does not set SSATD_CONFIG")
	}
	var data string
	for _, vm := range c.VolumeMounts {
		rel, err := filepath.Rel(vm.MountPath, file)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if !vm.ReadOnly {
			t.Errorf("volume mount %s is writable", vm.MountPath)
		}
		for _, v := range m.deployment.Spec.Template.Spec.Volumes {
			if v.Name != vm.Name {
				continue
			}
			var found bool
			switch {
			case v.ConfigMap != nil:
				cm, ok := m.configMaps[v.ConfigMap.Name]
				if !ok {
					t.Fatalf("volume %s names ConfigMap %s, which is not created", v.Name, v.ConfigMap.Name)
				}
				data, found = cm.Data[rel]
			case v.Secret != nil:
				s, ok := m.secrets[v.Secret.SecretName]
				if !ok {
					t.Fatalf("volume %s names Secret %s, which is not created", v.Name, v.Secret.SecretName)
				}
				var b []byte
				b, found = s.Data[rel]
				data = string(b)
			}
			if !found {
				t.Fatalf("volume %s has no key %s for SSATD_CONFIG=%s", v.Name, rel, file)
			}
		}
	}
	if data == "" {
		t.Fatalf("SSATD_CONFIG=%s is not in a ConfigMap or Secret volume", file)
	}
	tmp := filepath.Join(t.TempDir(), "ssatd.toml")
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(tmp, environ)
	if err != nil {
		t.Fatalf("the ConfigMap's %s with the pod's SSATD_* variables does not load:\n%v", file, err)
	}
	return cfg, environ
}

// parseGoBytes parses a GOMEMLIMIT value: a byte count with an optional
// B, KiB, MiB, GiB or TiB suffix.
func parseGoBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	return n * mult, nil
}

func selects(t *testing.T, what string, sel *metav1.LabelSelector, podLabels map[string]string) {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("%s selector: %v", what, err)
	}
	if s.Empty() || !s.Matches(labels.Set(podLabels)) {
		t.Errorf("%s selector %q does not select the Deployment's pods (labels %v)", what, s, podLabels)
	}
}

// TestKubernetes checks the cross-references of the kustomize base and its
// example overlays: what the API server would accept and kubectl cannot
// know.
func TestKubernetes(t *testing.T) {
	for _, dir := range kustomizations {
		t.Run(dir, func(t *testing.T) { checkManifests(t, buildKustomization(t, dir)) })
	}
}

func checkManifests(t *testing.T, m *manifests) {
	d := m.deployment
	pod := &d.Spec.Template.Spec
	c := ssatdContainer(t, d)
	cfg, _ := podConfig(t, m, c)
	listen := mustPort(t, "server.listen", cfg.Server.Listen)
	admin := mustPort(t, "server.admin_listen", cfg.Server.AdminListen)
	podLabels := d.Spec.Template.Labels

	t.Run("replicas and rollout", func(t *testing.T) {
		if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
			t.Errorf("replicas %v, want at least 2", d.Spec.Replicas)
		}
		selects(t, "Deployment", d.Spec.Selector, podLabels)
		ru := d.Spec.Strategy.RollingUpdate
		if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
			t.Errorf("strategy %+v: want a rolling update with maxUnavailable 0", d.Spec.Strategy)
		}
	})

	t.Run("probes on the admin port", func(t *testing.T) {
		if host, _, _ := net.SplitHostPort(cfg.Server.AdminListen); host != "" && host != "0.0.0.0" && host != "::" {
			t.Errorf("server.admin_listen %s: the kubelet probes the pod IP, so listen on all interfaces", cfg.Server.AdminListen)
		}
		for _, p := range []struct {
			name  string
			probe *corev1.Probe
			path  string
		}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}} {
			if p.probe == nil || p.probe.HTTPGet == nil {
				t.Errorf("no HTTP %s probe", p.name)
				continue
			}
			if got := containerPort(t, c, p.probe.HTTPGet.Port); got != admin {
				t.Errorf("%s probe on port %d, but server.admin_listen is %s", p.name, got, cfg.Server.AdminListen)
			}
			if p.probe.HTTPGet.Path != p.path {
				t.Errorf("%s probe path %s, want %s", p.name, p.probe.HTTPGet.Path, p.path)
			}
		}
		for _, cp := range c.Ports {
			want := map[string]int{"http": listen, "admin": admin}[cp.Name]
			if int(cp.ContainerPort) != want {
				t.Errorf("container port %s = %d, want %d from the config", cp.Name, cp.ContainerPort, want)
			}
		}
	})

	t.Run("termination covers the drain", func(t *testing.T) {
		var preStop time.Duration
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
			if c.Lifecycle.PreStop.Sleep == nil {
				t.Error("preStop is not a sleep action; the image has no shell for anything else")
			} else {
				preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
			}
		}
		if preStop == 0 {
			t.Error("no preStop sleep: kube-proxy and ingresses may still send to a pod that stopped listening")
		}
		need := preStop + cfg.Server.DrainPeriod.Duration + cfg.Server.ShutdownTimeout.Duration
		const margin = 5 * time.Second
		if pod.TerminationGracePeriodSeconds == nil {
			t.Fatal("no terminationGracePeriodSeconds")
		}
		if grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second; grace < need+margin {
			t.Errorf("terminationGracePeriodSeconds %s < preStop %s + drain_period %s + shutdown_timeout %s + %s margin: pods are killed mid-response",
				grace, preStop, cfg.Server.DrainPeriod, cfg.Server.ShutdownTimeout, margin)
		}
		rp := c.ReadinessProbe
		if rp != nil {
			notice := time.Duration(rp.PeriodSeconds*rp.FailureThreshold) * time.Second
			if notice > cfg.Server.DrainPeriod.Duration {
				t.Errorf("readiness notices a failing /readyz after %s, longer than drain_period %s", notice, cfg.Server.DrainPeriod)
			}
		}
	})

	t.Run("security context", func(t *testing.T) {
		_, img := readImageFacts(t)
		psc, sc := pod.SecurityContext, c.SecurityContext
		if psc == nil || sc == nil {
			t.Fatal("pod or container securityContext missing")
		}
		nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (psc.RunAsNonRoot != nil && *psc.RunAsNonRoot)
		if !nonRoot {
			t.Error("runAsNonRoot is not set")
		}
		if psc.RunAsUser == nil || int(*psc.RunAsUser) != img.uid || psc.RunAsGroup == nil || int(*psc.RunAsGroup) != img.gid {
			t.Errorf("runAsUser/runAsGroup %v/%v, want the image's USER %d:%d", psc.RunAsUser, psc.RunAsGroup, img.uid, img.gid)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Error("readOnlyRootFilesystem is not true")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Error("allowPrivilegeEscalation is not false")
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
			t.Errorf("capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
		}
	})

	t.Run("resources and GOMEMLIMIT", func(t *testing.T) {
		req, lim := c.Resources.Requests, c.Resources.Limits
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			rq, lm := req[r], lim[r]
			if rq.IsZero() || lm.IsZero() {
				t.Errorf("%s request %s, limit %s: both must be set", r, rq.String(), lm.String())
			} else if rq.Cmp(lm) > 0 {
				t.Errorf("%s request %s above the limit %s", r, rq.String(), lm.String())
			}
		}
		memLimit := lim[corev1.ResourceMemory]
		var goMem string
		for _, e := range c.Env {
			if e.Name == "GOMEMLIMIT" {
				goMem = e.Value
			}
		}
		n, err := parseGoBytes(goMem)
		if err != nil {
			t.Fatalf("GOMEMLIMIT %q: %v", goMem, err)
		}
		if ratio := float64(n) / float64(memLimit.Value()); ratio < 0.8 || ratio > 0.95 {
			t.Errorf("GOMEMLIMIT %s is %.0f %% of the memory limit %s, want 80 to 95 %%: leave room for what the Go heap does not count",
				goMem, ratio*100, memLimit.String())
		}
	})

	t.Run("metrics scrape", func(t *testing.T) {
		a := d.Spec.Template.Annotations
		if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != strconv.Itoa(admin) || a["prometheus.io/path"] != "/metrics" {
			t.Errorf("pod annotations %v, want prometheus.io/scrape true, port %d (server.admin_listen), path /metrics", a, admin)
		}
	})

	t.Run("service", func(t *testing.T) {
		s := m.service
		sel := &metav1.LabelSelector{MatchLabels: s.Spec.Selector}
		selects(t, "Service", sel, podLabels)
		if len(s.Spec.Ports) == 0 {
			t.Fatal("the Service has no ports")
		}
		for _, p := range s.Spec.Ports {
			if got := containerPort(t, c, p.TargetPort); got != listen {
				t.Errorf("Service port %s targets %d, but server.listen is %s (the admin port stays off the Service)", p.Name, got, cfg.Server.Listen)
			}
		}
	})

	t.Run("autoscaler", func(t *testing.T) {
		h := m.hpa
		ref := h.Spec.ScaleTargetRef
		if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != d.Name {
			t.Errorf("HPA scales %+v, want the Deployment %s", ref, d.Name)
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 || h.Spec.MaxReplicas < *h.Spec.MinReplicas {
			t.Errorf("HPA replicas %v..%d, want a minimum of at least 2", h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		var onCPU bool
		for _, mt := range h.Spec.Metrics {
			if mt.Type == autoscalingv2.ResourceMetricSourceType && mt.Resource != nil && mt.Resource.Name == corev1.ResourceCPU &&
				mt.Resource.Target.Type == autoscalingv2.UtilizationMetricType && mt.Resource.Target.AverageUtilization != nil {
				onCPU = true
			}
		}
		if !onCPU {
			t.Errorf("HPA metrics %+v, want CPU utilization", h.Spec.Metrics)
		}
		if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.IsZero() {
			t.Error("CPU utilization needs a CPU request")
		}
	})

	t.Run("disruption budget", func(t *testing.T) {
		p := m.pdb
		selects(t, "PodDisruptionBudget", p.Spec.Selector, podLabels)
		minReplicas := int(*d.Spec.Replicas)
		if m.hpa.Spec.MinReplicas != nil {
			minReplicas = int(*m.hpa.Spec.MinReplicas)
		}
		switch {
		case p.Spec.MaxUnavailable != nil:
			if v := p.Spec.MaxUnavailable.IntValue(); v < 1 || v >= minReplicas {
				t.Errorf("maxUnavailable %d: want at least 1 (drains must progress) and below %d replicas", v, minReplicas)
			}
		case p.Spec.MinAvailable != nil:
			if v := p.Spec.MinAvailable.IntValue(); v < 1 || v >= minReplicas {
				t.Errorf("minAvailable %d: want at least 1 and below %d replicas, or no drain can progress", v, minReplicas)
			}
		default:
			t.Error("the PodDisruptionBudget sets neither maxUnavailable nor minAvailable")
		}
	})
}

// Per-page memory and idle heap of a replica, measured with ssatd-load at
// c=64 with 64 page slots (docs/deployment.md, "Sizing a replica").
const perPageMiB, idleMiB = 6.5, 25.0

// TestKubernetesSizing keeps the memory request honest: the pod's own
// server.max_concurrent_pages pages in flight at the measured memory per
// page, over the idle heap, fit the request, and docs/deployment.md states
// the same arithmetic.
func TestKubernetesSizing(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "deployment.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range kustomizations {
		t.Run(dir, func(t *testing.T) {
			m := buildKustomization(t, dir)
			c := ssatdContainer(t, m.deployment)
			cfg, _ := podConfig(t, m, c)
			pages := cfg.Server.MaxConcurrentPages
			need := float64(pages)*perPageMiB + idleMiB
			want := resource.MustParse(fmt.Sprintf("%.0fMi", need))
			if got := c.Resources.Requests[corev1.ResourceMemory]; got.Cmp(want) < 0 {
				t.Errorf("memory request %s below max_concurrent_pages %d × %.1f MiB + %.0f MiB = %s",
					got.String(), pages, perPageMiB, idleMiB, want.String())
			}
			line := fmt.Sprintf("%d in flight × %.1f MiB + %.0f MiB | %.0f MiB", pages, perPageMiB, idleMiB, need)
			if !strings.Contains(string(doc), line) {
				t.Errorf("docs/deployment.md does not state the design point %q", line)
			}
		})
	}
}

// TestConfigInSecretOverlay checks what the overlay changes: the file
// comes from a Secret and no ConfigMap is left behind.
func TestConfigInSecretOverlay(t *testing.T) {
	m := buildKustomization(t, "overlays/config-in-secret")
	if len(m.configMaps) != 0 {
		t.Errorf("the overlay still creates ConfigMaps %v", slices.Collect(maps.Keys(m.configMaps)))
	}
	var fromSecret bool
	for _, v := range m.deployment.Spec.Template.Spec.Volumes {
		if v.Name == "config" && v.Secret != nil && strings.HasPrefix(v.Secret.SecretName, "ssatd-config-file-") {
			fromSecret = true
		}
	}
	if !fromSecret {
		t.Errorf("the config volume is not the generated Secret: %+v", m.deployment.Spec.Template.Spec.Volumes)
	}
}

package deploy

import (
	"cmp"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// fleetProfile is the Compose profile of the two replicas that share a
// Redis-protocol store (docs/deployment.md, "Several instances: a shared
// store").
const fleetProfile = "fleet"

// redisImages are the images whose services speak the Redis protocol that
// store.url reaches.
var redisImages = []string{"redis", "valkey/valkey"}

// TestComposeFleet checks what `docker compose --profile fleet up` needs
// for two instances to share identities: a pinned Redis (or Valkey) under
// the profile, at least two ssatd replicas under it whose store.url names
// that service by its Compose name and listening port, one ec.passphrase
// among them, and replicas that wait for the store's health. Without the
// profile nothing of it runs, and the default instances keep no shared
// store.
func TestComposeFleet(t *testing.T) {
	p, err := loadComposeFiles([]string{fleetProfile}, "docker-compose.yml")
	if err != nil {
		t.Fatalf("docker-compose.yml, profile %s: %v", fleetProfile, err)
	}
	_, f := readImageFacts(t)
	redis, redisPort := redisService(t, p)

	var replicas []string
	urls, passphrases := map[string]bool{}, map[string]bool{}
	for _, name := range ssatdServeServices(p, f) {
		svc := p.Services[name]
		if !slices.Contains(svc.Profiles, fleetProfile) {
			continue
		}
		replicas = append(replicas, name)
		cfg := serviceConfig(t, name, svc, argv(svc, f), f)
		urls[cfg.Store.URL], passphrases[cfg.EC.Passphrase] = true, true
		u, err := url.Parse(cfg.Store.URL)
		switch {
		case err != nil || cfg.Store.URL == "":
			t.Errorf("service %s: store.url %q, want the %s service", name, cfg.Store.URL, redis)
		case u.Hostname() != redis || cmp.Or(u.Port(), "6379") != strconv.Itoa(redisPort):
			t.Errorf("service %s: store.url %s, want the Compose service %s on its port %d", name, cfg.Store.URL, redis, redisPort)
		}
		if cfg.EC.Passphrase == "" {
			t.Errorf("service %s: no ec.passphrase: it mints no edge cookie to share", name)
		}
		if d, ok := svc.DependsOn[redis]; !ok || d.Condition != types.ServiceConditionHealthy {
			t.Errorf("service %s: depends_on %v, want %s with service_healthy", name, svc.DependsOn, redis)
		}
	}
	if len(replicas) < 2 {
		t.Fatalf("profile %s runs ssatd replicas %v, want at least two", fleetProfile, replicas)
	}
	if len(urls) != 1 || len(passphrases) != 1 {
		t.Errorf("replicas %v: store.url %v and ec.passphrase (%d distinct): want one of each, shared", replicas, slices.Sorted(maps.Keys(urls)), len(passphrases))
	}

	base, err := loadComposeFiles(nil, "docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(replicas, redis) {
		if _, ok := base.Services[name]; ok {
			t.Errorf("service %s runs without --profile %s", name, fleetProfile)
		}
	}
	for _, name := range ssatdServeServices(base, f) {
		svc := base.Services[name]
		if cfg := serviceConfig(t, name, svc, argv(svc, f), f); cfg.Store.URL != "" {
			t.Errorf("service %s (no profile) uses store.url %s, which runs only under --profile %s", name, cfg.Store.URL, fleetProfile)
		}
	}
}

// redisService checks the fleet's store service and returns its name, the
// host the replicas reach it by, and the port it listens on.
func redisService(t *testing.T, p *types.Project) (string, int) {
	t.Helper()
	var name string
	for _, n := range slices.Sorted(maps.Keys(p.Services)) {
		repo, _, _ := strings.Cut(p.Services[n].Image, ":")
		if slices.Contains(redisImages, repo) {
			if name != "" {
				t.Fatalf("services %s and %s both run a Redis image; the test expects one store", name, n)
			}
			name = n
		}
	}
	if name == "" {
		t.Fatalf("profile %s has no service with an image of %v", fleetProfile, redisImages)
	}
	svc := p.Services[name]
	if _, tag, _ := strings.Cut(svc.Image, ":"); tag == "" || tag == "latest" {
		t.Errorf("service %s: image %s is not pinned to a release", name, svc.Image)
	}
	if !slices.Equal(svc.Profiles, []string{fleetProfile}) {
		t.Errorf("service %s: profiles %v, want [%s]", name, svc.Profiles, fleetProfile)
	}
	port, err := strconv.Atoi(cmp.Or(flagValue(svc.Command, "port"), "6379"))
	if err != nil {
		t.Fatalf("service %s: --port: %v", name, err)
	}
	var exposed bool
	for _, e := range svc.Expose {
		exposed = exposed || mustPort(t, "expose", e) == port
	}
	if !exposed {
		t.Errorf("service %s listens on %d but exposes %v", name, port, svc.Expose)
	}
	if len(svc.Ports) != 0 {
		t.Errorf("service %s publishes %v: the store holds identities and stays on the Compose network", name, svc.Ports)
	}
	return name, port
}

// TestKubernetesFleet checks what the fleet overlay adds: a Redis-protocol
// store with one replica (two behind its Service would be two stores), a
// Service by the name and port that the pods' store.url gives, selecting
// the store's pods and only them, and the store's address and the
// edge-cookie passphrase coming from the Secret, not from the ConfigMap or
// the Deployment's literal environment.
func TestKubernetesFleet(t *testing.T) {
	m := buildKustomization(t, "overlays/fleet")
	c := ssatdContainer(t, m.deployment)
	cfg, _ := podConfig(t, m, c)
	if r := m.deployment.Spec.Replicas; r == nil || *r < 2 {
		t.Errorf("ssatd replicas %v, want at least two sharing the store", r)
	}
	if cfg.EC.Passphrase == "" {
		t.Error("no ec.passphrase: the pods mint no edge cookie to share")
	}
	u, err := url.Parse(cfg.Store.URL)
	if err != nil || cfg.Store.URL == "" {
		t.Fatalf("store.url %q: %v", cfg.Store.URL, err)
	}

	svc, ok := m.services[u.Hostname()]
	if !ok {
		t.Fatalf("store.url %s names host %s, which is no Service of the overlay (%v)", cfg.Store.URL, u.Hostname(), slices.Sorted(maps.Keys(m.services)))
	}
	var store *appsv1.Deployment
	for _, name := range slices.Sorted(maps.Keys(m.deployments)) {
		d := m.deployments[name]
		if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			if store != nil || d == m.deployment {
				t.Fatalf("Service %s selects the pods of %s too: want the store's alone", svc.Name, d.Name)
			}
			store = d
		}
	}
	if store == nil {
		t.Fatalf("Service %s selects no Deployment's pods", svc.Name)
	}
	if labels.SelectorFromSet(m.service.Spec.Selector).Matches(labels.Set(store.Spec.Template.Labels)) {
		t.Errorf("the ssatd Service selects the store's pods too")
	}
	replicas := int32(1) // the API's default
	if store.Spec.Replicas != nil {
		replicas = *store.Spec.Replicas
	}
	if replicas != 1 || store.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("store %s: replicas %d, strategy %s; want 1 and Recreate, never two stores at once", store.Name, replicas, store.Spec.Strategy.Type)
	}
	sc := &store.Spec.Template.Spec.Containers[0]
	if repo, tag, _ := strings.Cut(sc.Image, ":"); !slices.Contains(redisImages, repo) || tag == "" || tag == "latest" {
		t.Errorf("store %s: image %s, want a pinned image of %v", store.Name, sc.Image, redisImages)
	}
	var port *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if strconv.Itoa(int(svc.Spec.Ports[i].Port)) == cmp.Or(u.Port(), "6379") {
			port = &svc.Spec.Ports[i]
		}
	}
	if port == nil {
		t.Fatalf("store.url %s: Service %s has no port %s", cfg.Store.URL, svc.Name, cmp.Or(u.Port(), "6379"))
	}
	if got, want := containerPort(t, sc, port.TargetPort), cmp.Or(flagValue(sc.Args, "port"), "6379"); strconv.Itoa(got) != want {
		t.Errorf("Service %s targets port %d, but %s listens on %s", svc.Name, got, sc.Name, want)
	}

	for _, e := range c.Env {
		if e.Name == "SSATD_EC_PASSPHRASE" || e.Name == "SSATD_STORE_URL" {
			t.Errorf("env %s is literal in the Deployment; it is a secret", e.Name)
		}
	}
	for name, cm := range m.configMaps {
		for key, data := range cm.Data {
			if strings.Contains(data, cfg.EC.Passphrase) || strings.Contains(data, cfg.Store.URL) {
				t.Errorf("ConfigMap %s %s holds the passphrase or the store URL; they belong in the Secret", name, key)
			}
		}
	}
}

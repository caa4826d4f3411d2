package deploy

import (
	"encoding/json"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"
)

// Jaeger v2's all-in-one configuration, which the jaeger image runs without
// a --config (cmd/jaeger/internal/all-in-one.yaml in jaegertracing/jaeger,
// v2.20.0): every listener on ${JAEGER_LISTEN_HOST:-localhost}, OTLP/HTTP
// on 4318, the query service (UI and the HTTP API Grafana reads) on 16686,
// the healthcheckv2 extension on 13133, whose status path is /status.
const (
	jaegerOTLPHTTPPort = 4318
	jaegerQueryPort    = 16686
	jaegerHealthPort   = 13133
)

const (
	observabilityProfile = "observability"
	tracingFile          = "docker-compose.tracing.yml"
)

// TestComposeObservability checks what `docker compose -f
// docker-compose.yml -f docker-compose.tracing.yml --profile observability
// up` needs for traces to reach Grafana: a pinned Jaeger listening for OTLP
// beyond its own container, both ssatd instances sending to its OTLP/HTTP
// port by its service name, Grafana provisioned with a Jaeger data source
// on its query port, and the dashboard Grafana opens linking to Explore on
// that data source for the service the instances name. Without the tracing
// file, the instances do not trace: there may be no Jaeger to send to.
func TestComposeObservability(t *testing.T) {
	p, err := loadComposeFiles([]string{observabilityProfile}, "docker-compose.yml", tracingFile)
	if err != nil {
		t.Fatalf("docker-compose.yml + %s, profile %s: %v", tracingFile, observabilityProfile, err)
	}
	jaeger := jaegerService(t, p)
	_, f := readImageFacts(t)

	var serviceNames []string
	for _, name := range ssatdServeServices(p, f) {
		svc := p.Services[name]
		cfg := serviceConfig(t, name, svc, argv(svc, f), f)
		u, err := url.Parse(cfg.Tracing.TracesURL())
		switch {
		case err != nil || cfg.Tracing.TracesURL() == "":
			t.Errorf("service %s: tracing is off (tracing.endpoint %q)", name, cfg.Tracing.Endpoint)
			continue
		case u.Scheme != "http" || u.Hostname() != jaeger || u.Port() != strconv.Itoa(jaegerOTLPHTTPPort) || u.Path != "/v1/traces":
			t.Errorf("service %s: traces go to %s, want Jaeger's OTLP/HTTP receiver http://%s:%d/v1/traces", name, u, jaeger, jaegerOTLPHTTPPort)
		}
		if cfg.Tracing.SampleRatio <= 0 {
			t.Errorf("service %s: tracing.sample_ratio %v records nothing", name, cfg.Tracing.SampleRatio)
		}
		if cfg.Tracing.ServiceName == "" {
			t.Errorf("service %s: no tracing.service_name for the dashboard's links to search for", name)
		}
		serviceNames = append(serviceNames, cfg.Tracing.ServiceName)
		if d, ok := svc.DependsOn[jaeger]; !ok || d.Condition != types.ServiceConditionHealthy {
			t.Errorf("service %s: does not wait for a healthy %s (depends_on %+v)", name, jaeger, svc.DependsOn)
		}
	}
	if len(serviceNames) == 0 {
		t.Fatal("no ssatd serve service")
	}

	grafana := serviceWithImage(t, p, "grafana/grafana")
	if _, ok := p.Services[grafana].DependsOn[jaeger]; !ok {
		t.Errorf("service %s does not start after %s", grafana, jaeger)
	}
	uid := jaegerDatasource(t, p.Services[grafana], jaeger)
	checkTraceLinks(t, homeDashboard(t, p.Services[grafana]), uid, serviceNames)

	published := map[string]string{}
	for name, svc := range p.Services {
		for _, pc := range svc.Ports {
			if other, dup := published[pc.Published]; dup {
				t.Errorf("host port %s is published by %s and %s", pc.Published, name, other)
			}
			published[pc.Published] = name
		}
	}
	if published[strconv.Itoa(jaegerQueryPort)] != jaeger {
		t.Errorf("the Jaeger UI (%d) is not published on the host: %v", jaegerQueryPort, published)
	}

	// The tracing file without the profile: Compose refuses the project
	// (the instances depend on a service it does not enable) or enables
	// Jaeger; it never runs instances that export to nowhere.
	if q, err := loadComposeFiles(nil, "docker-compose.yml", tracingFile); err == nil {
		if _, ok := q.Services[jaeger]; !ok {
			t.Errorf("%s without the profile runs %v, tracing to a %s that does not run", tracingFile, slices.Sorted(maps.Keys(q.Services)), jaeger)
		}
	} else if !strings.Contains(err.Error(), jaeger) {
		t.Errorf("%s without the profile: %v, want an error naming %s", tracingFile, err, jaeger)
	}

	// The base file alone, profile or not: no instance traces.
	for _, profiles := range [][]string{nil, {observabilityProfile}} {
		base, err := loadComposeFiles(profiles, "docker-compose.yml")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range ssatdServeServices(base, f) {
			svc := base.Services[name]
			if cfg := serviceConfig(t, name, svc, argv(svc, f), f); cfg.Tracing.TracesURL() != "" {
				t.Errorf("docker-compose.yml, profiles %v: service %s traces to %s without %s", profiles, name, cfg.Tracing.TracesURL(), tracingFile)
			}
			for k := range svc.Environment {
				if strings.HasPrefix(k, "OTEL_EXPORTER_OTLP_") && strings.HasSuffix(k, "ENDPOINT") {
					t.Errorf("docker-compose.yml: service %s sets %s without %s", name, k, tracingFile)
				}
			}
		}
	}
}

// ssatdServeServices are the services that run this repository's image
// with `serve`, sorted.
func ssatdServeServices(p *types.Project, f imageFacts) []string {
	built := map[string]bool{}
	for _, svc := range p.Services {
		if svc.Build != nil && svc.Image != "" {
			built[svc.Image] = true
		}
	}
	var names []string
	for name, svc := range p.Services {
		if args := argv(svc, f); (svc.Build != nil || built[svc.Image]) && len(args) > 1 && args[1] == "serve" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// serviceWithImage names the one service whose image is repo (any tag).
func serviceWithImage(t *testing.T, p *types.Project, repo string) string {
	t.Helper()
	var found []string
	for name, svc := range p.Services {
		if r, _, _ := strings.Cut(svc.Image, ":"); r == repo {
			found = append(found, name)
		}
	}
	if len(found) != 1 {
		t.Fatalf("services with image %s: %v, want one", repo, found)
	}
	return found[0]
}

// jaegerService checks the trace backend and returns its service name, the
// host name the others reach it by.
func jaegerService(t *testing.T, p *types.Project) string {
	t.Helper()
	name := serviceWithImage(t, p, "jaegertracing/jaeger")
	svc := p.Services[name]
	if _, tag, _ := strings.Cut(svc.Image, ":"); tag == "" || tag == "latest" {
		t.Errorf("service %s: image %s is not pinned to a release", name, svc.Image)
	}
	if !slices.Equal(svc.Profiles, []string{observabilityProfile}) {
		t.Errorf("service %s: profiles %v, want [%s]", name, svc.Profiles, observabilityProfile)
	}
	// The all-in-one configuration's listeners are only known without a
	// configuration file of the service's own.
	if slices.ContainsFunc(svc.Command, func(a string) bool { return strings.HasPrefix(a, "--config") }) {
		t.Errorf("service %s: command %q replaces the all-in-one configuration this test knows", name, svc.Command)
	}
	if v := svc.Environment["JAEGER_LISTEN_HOST"]; v == nil || *v != "0.0.0.0" {
		t.Errorf("service %s: JAEGER_LISTEN_HOST is not 0.0.0.0: the OTLP receiver must listen beyond the container's localhost", name)
	}
	hc := svc.HealthCheck
	if hc == nil || hc.Disable || len(hc.Test) < 2 || hc.Test[0] != "CMD" {
		t.Fatalf("service %s: health check %+v, want the CMD form", name, hc)
	}
	u, err := url.Parse(hc.Test[len(hc.Test)-1])
	if err != nil || u.Hostname() != "127.0.0.1" || u.Port() != strconv.Itoa(jaegerHealthPort) || u.Path != "/status" {
		t.Errorf("service %s: health check %q, want it to probe http://127.0.0.1:%d/status", name, hc.Test, jaegerHealthPort)
	}
	for _, pc := range svc.Ports {
		if pc.Target != jaegerOTLPHTTPPort && pc.Target != jaegerQueryPort {
			t.Errorf("service %s publishes %d, on which the all-in-one configuration does not listen", name, pc.Target)
		}
	}
	return name
}

// jaegerDatasource finds the Jaeger data source among the files Grafana is
// provisioned with, checks that it reads the query service of the jaeger
// service, and returns its uid.
func jaegerDatasource(t *testing.T, grafana types.ServiceConfig, jaeger string) string {
	t.Helper()
	dir := hostPath(grafana, "/etc/grafana/provisioning/datasources")
	if dir == "" {
		t.Fatal("no bind mount provides Grafana's /etc/grafana/provisioning/datasources")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.y*ml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no data source files in %s: %v", dir, err)
	}
	var uids []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var prov struct {
			APIVersion  int `json:"apiVersion"`
			Datasources []struct {
				Name, UID, Type, Access, URL string
				IsDefault                    bool `json:"isDefault"`
			} `json:"datasources"`
		}
		if err := yaml.UnmarshalStrict(data, &prov); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, ds := range prov.Datasources {
			if ds.Type != "jaeger" {
				continue
			}
			u, err := url.Parse(ds.URL)
			if err != nil || u.Hostname() != jaeger || u.Port() != strconv.Itoa(jaegerQueryPort) {
				t.Errorf("%s: data source %s reads %q, want Jaeger's query service http://%s:%d", file, ds.Name, ds.URL, jaeger, jaegerQueryPort)
			}
			if ds.Access != "proxy" {
				t.Errorf("%s: data source %s access %q: the browser cannot resolve %s, Grafana's server must ask", file, ds.Name, ds.Access, jaeger)
			}
			if ds.UID == "" {
				t.Errorf("%s: data source %s has no uid for links to name", file, ds.Name)
			}
			uids = append(uids, ds.UID)
		}
	}
	if len(uids) != 1 {
		t.Fatalf("Jaeger data sources provisioned: %v, want one", uids)
	}
	return uids[0]
}

// homeDashboard reads the dashboard Grafana opens first, through its mount.
func homeDashboard(t *testing.T, grafana types.ServiceConfig) []byte {
	t.Helper()
	v := grafana.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
	if v == nil {
		t.Fatal("Grafana has no GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH")
	}
	src := hostPath(grafana, *v)
	if src == "" {
		t.Fatalf("no bind mount provides Grafana's %s", *v)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type dashboardLink struct {
	Title string `json:"title"`
	Type  string `json:"type"`
	URL   string `json:"url"`
}

// checkTraceLinks checks that the dashboard's links search the traces of
// every one of services, and that every link to Explore (the dashboard's
// and the panels') opens a Jaeger search for one of them on the data source
// uid, named directly or through a data source variable of type jaeger,
// over the dashboard's time range.
func checkTraceLinks(t *testing.T, data []byte, uid string, services []string) {
	t.Helper()
	var d struct {
		Links      []dashboardLink `json:"links"`
		Templating struct {
			List []struct {
				Name, Type string
				Query      any
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title string          `json:"title"`
			Links []dashboardLink `json:"links"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	jaegerVars := map[string]bool{}
	for _, v := range d.Templating.List {
		if v.Type == "datasource" && v.Query == "jaeger" {
			jaegerVars["${"+v.Name+"}"] = true
		}
	}
	names := func(ds string) bool { return ds == uid || jaegerVars[ds] }
	searched := map[string]bool{} // by the dashboard's own links
	check := func(where string, l dashboardLink) bool {
		u, err := url.Parse(l.URL)
		if err != nil || u.Path != "/explore" {
			return false
		}
		var panes map[string]struct {
			Datasource string `json:"datasource"`
			Queries    []struct {
				Datasource struct{ Type, UID string }
				QueryType  string `json:"queryType"`
				Service    string `json:"service"`
			} `json:"queries"`
			Range struct{ From, To string } `json:"range"`
		}
		if err := json.Unmarshal([]byte(u.Query().Get("panes")), &panes); err != nil || len(panes) != 1 {
			t.Errorf("%s: link %q: panes %q: %v", where, l.Title, u.Query().Get("panes"), err)
			return false
		}
		for _, pane := range panes {
			if !names(pane.Datasource) || len(pane.Queries) == 0 {
				t.Errorf("%s: link %q opens data source %q, want %s or a jaeger data source variable", where, l.Title, pane.Datasource, uid)
			}
			for _, q := range pane.Queries {
				if q.Datasource.Type != "jaeger" || !names(q.Datasource.UID) || q.QueryType != "search" || !slices.Contains(services, q.Service) {
					t.Errorf("%s: link %q: query %+v, want a Jaeger search for one of %v", where, l.Title, q, services)
				}
				if where == "dashboard" {
					searched[q.Service] = true
				}
			}
			if pane.Range.From != "${__from}" || pane.Range.To != "${__to}" {
				t.Errorf("%s: link %q: range %+v, want the dashboard's (${__from}, ${__to})", where, l.Title, pane.Range)
			}
		}
		return true
	}
	dashboardLinks := 0
	for _, l := range d.Links {
		if check("dashboard", l) {
			dashboardLinks++
		}
	}
	if dashboardLinks == 0 {
		t.Errorf("the dashboard has no link to traces in Explore: %+v", d.Links)
	}
	for _, s := range services {
		if !searched[s] {
			t.Errorf("no dashboard link searches the traces of service %s", s)
		}
	}
	for _, p := range d.Panels {
		for _, l := range p.Links {
			check("panel "+p.Title, l)
		}
	}
}

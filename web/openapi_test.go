package web

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestOpenAPIMatchesRoutes: every route of the mux is documented in
// openapi.yaml with its method, and the file documents no other.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	b := embedded(t, "openapi.yaml")
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
	var documented, served []string
	for path, ops := range doc.Paths {
		for m := range ops {
			switch m {
			case "get", "post", "put", "patch", "delete", "head", "options":
				documented = append(documented, strings.ToUpper(m)+" "+path)
			}
		}
	}
	e := newEnv(t, nil)
	for _, r := range e.srv.routes() {
		// "/{$}" is the mux's exact "/"; OpenAPI writes it "/".
		served = append(served, r.method+" "+strings.TrimSuffix(r.path, "{$}"))
	}
	slices.Sort(documented)
	slices.Sort(served)
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in openapi.yaml", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.yaml documents %s, which is not served", d)
		}
	}
}

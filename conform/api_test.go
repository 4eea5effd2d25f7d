package conform

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/nowserving/nowserving/internal/testkit/golden"
)

// TestAPIOperationsInOpenAPI: the operations the API kit reports under
// are operations of web/openapi.yaml, by method and path, and the webhook
// it receives is one of the document's webhooks.
func TestAPIOperationsInOpenAPI(t *testing.T) {
	b := golden.Read(t, "../web/openapi.yaml")
	var doc struct {
		Paths    map[string]map[string]any `yaml:"paths"`
		Webhooks map[string]map[string]any `yaml:"webhooks"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{opSlots, opBook, opGet, opCancel, opConfirm, opCheckIn, opTicket} {
		method, path, _ := strings.Cut(op, " ")
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
			t.Errorf("the kit reports under %q, which openapi.yaml does not have", op)
		}
	}
	// "POST webhook event (...)": the method and the webhook's name.
	f := strings.Fields(opWebhook)
	if _, ok := doc.Webhooks[f[2]][strings.ToLower(f[0])]; !ok || f[1] != "webhook" {
		t.Errorf("the kit reports the webhook under %q, which openapi.yaml's webhooks do not have", opWebhook)
	}
}

package docsapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
)

func TestKindOf(t *testing.T) {
	for key, want := range map[string]keyKind{
		"mint_abc123":          adminKey,
		"mint_dsc_abc123":      assistantKey,
		"mint_dscabc":          adminKey, // no underscore after dsc: an admin key's base62
		"mint_DSC_abc":         adminKey, // prefixes are case-sensitive
		"some-self-hosted-key": adminKey,
	} {
		if got := kindOf(key); got != want {
			t.Errorf("kindOf(%q) = %v, want %v", key, got, want)
		}
	}
}

// An admin operation called with an assistant key is refused before
// anything is sent, with an error that names both kinds and not the key.
func TestAdminCallRefusesAnAssistantKey(t *testing.T) {
	const key = "mint_dsc_SENTINEL7f3a9cKEYdoNotLeak"
	mt := httpmock.NewMockTransport()
	c, err := NewClient(key, WithHTTPClient(&http.Client{Transport: mt}), WithBaseURL(testBaseURL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.AgentJobs.Get(context.Background(), "proj", "j1")
	if !errors.Is(err, ErrInvalidParam) {
		t.Fatalf("Get with an assistant key = %v, want ErrInvalidParam", err)
	}
	var v *ValidationError
	if !errors.As(err, &v) || v.Param != "apiKey" {
		t.Errorf("the error names %+v, want apiKey", v)
	}
	msg := err.Error()
	for _, want := range []string{"an assistant key (mint_dsc_...)", "an admin API key (mint_...)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "SENTINEL") {
		t.Errorf("the error holds the key: %q", msg)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}

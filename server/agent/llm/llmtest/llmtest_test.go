package llmtest_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/agent/llm/llmtest"
)

func post(t *testing.T, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServer(t *testing.T) {
	s := llmtest.New(t)
	s.Script(llmtest.Reply{Deltas: []string{"scripted"}}, llmtest.Reply{Status: 503, RetryAfter: "1"})
	anthropic := map[string]string{"Anthropic-Version": "2023-06-01"}
	for _, tt := range []struct {
		name, path, body string
		header           map[string]string
		status           int
		want             string
	}{
		{name: "the script first", path: "/chat/completions", body: `{"stream":true}`, status: 200, want: `"content":"scripted"`},
		{name: "then its error", path: "/v1/messages", body: `{"stream":true,"max_tokens":1}`, header: anthropic, status: 503, want: `"type":"error"`},
		{name: "then the default", path: "/v1/messages", body: `{"stream":true,"max_tokens":1}`, header: anthropic, status: 200, want: "event: message_stop"},
		{name: "usage only when asked", path: "/chat/completions", body: `{"stream":true,"stream_options":{"include_usage":true}}`, status: 200, want: `"prompt_tokens":12`},
		{name: "only streams", path: "/chat/completions", body: `{}`, status: 400, want: "only streams"},
		{name: "Anthropic needs max_tokens", path: "/v1/messages", body: `{"stream":true}`, header: anthropic, status: 400, want: "max_tokens"},
		{name: "Anthropic needs its version", path: "/v1/messages", body: `{"stream":true,"max_tokens":1}`, status: 400, want: "anthropic-version"},
		{name: "an unknown path", path: "/v1/completions", body: `{}`, status: 404},
	} {
		status, body := post(t, s.URL()+tt.path, tt.body, tt.header)
		if status != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %s; want %d with %q", tt.name, status, body, tt.status, tt.want)
		}
	}
	if n := len(s.Requests()); n != 8 {
		t.Errorf("%d requests recorded, want 8", n)
	}
}

func TestRequestHelpers(t *testing.T) {
	s := llmtest.New(t)
	post(t, s.URL()+"/v1/chat/completions", `{"stream":true,"model":"m","messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":[{"type":"text","text":"Hello "},{"type":"image_url"},{"type":"text","text":"there"}]},
		{"role":"assistant","content":"Hi"}]}`, nil)
	post(t, s.URL()+"/v1/messages", `{"stream":true,"max_tokens":5,"system":[{"type":"text","text":"Be kind."}],
		"messages":[{"role":"user","content":"Q"}],"tools":[]}`, map[string]string{"Anthropic-Version": "x"})
	r := s.Requests()
	if r[0].Protocol != llmtest.OpenAI || r[0].System() != "Be brief." || r[0].Model() != "m" || r[0].Has("tools") {
		t.Errorf("OpenAI request: %+v", r[0])
	}
	if m := r[0].Messages(); len(m) != 2 || m[0] != (llmtest.Message{Role: "user", Content: "Hello there"}) || m[1].Content != "Hi" {
		t.Errorf("OpenAI messages %+v", m)
	}
	if r[1].Protocol != llmtest.Anthropic || r[1].System() != "Be kind." || !r[1].Has("tools") {
		t.Errorf("Anthropic request: %+v", r[1])
	}
	if m := r[1].Messages(); len(m) != 1 || m[0] != (llmtest.Message{Role: "user", Content: "Q"}) {
		t.Errorf("Anthropic messages %+v", m)
	}
}

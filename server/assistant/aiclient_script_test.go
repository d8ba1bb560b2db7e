package assistant_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// The npm client test: the ai package's own reader (testdata/aiclient,
// its ask.mjs) reads the assistant's answer as a page using useChat does.
// This file holds the runner and the check that the script is a check at
// all: that it fails on a stream the package refuses.

// aiClientDir holds the Node project: package.json, its committed lock,
// the script, and node_modules once npm ci installed it.
var aiClientDir = filepath.Join("testdata", "aiclient")

// aiClientResult is what ask.mjs prints: what the ai package made of the
// answers, and the first error (nil when there was none).
type aiClientResult struct {
	Answers []aiClientSeen `json:"answers"`
	Error   *string        `json:"error"`
}

// aiClientSeen is one answer as the ai package read it.
type aiClientSeen struct {
	Status  int               `json:"status"`
	Headers map[string]any    `json:"headers"`
	Chunks  []string          `json:"chunks"`
	Finish  map[string]any    `json:"finish"`
	Text    string            `json:"text"`
	Tools   []aiClientToolRun `json:"tools"`
	// Metadata is the message's metadata, which the start, finish and
	// message-metadata chunks set.
	Metadata map[string]any `json:"metadata"`
}

// aiClientToolRun is a tool part of the message.
type aiClientToolRun struct {
	Name   string          `json:"name"`
	State  string          `json:"state"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// askWithAIClient runs ask.mjs on node: questions to url with the
// assistant key, from the page currentPath, each after the first a
// follow-up in the first's thread. It fails the test when the script
// could not say what it saw; an error of the ai package is in the
// result's Error.
func askWithAIClient(t *testing.T, node, url, key, currentPath string, questions ...string) aiClientResult {
	t.Helper()
	// Generous: node starts in well under a second, the fake model answers
	// at once; only a stream that never ends reaches it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"ask.mjs", url, currentPath}, questions...)...)
	cmd.Dir = aiClientDir
	cmd.Env = append(cmd.Environ(), "ASSISTANT_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("node ask.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var res aiClientResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("node ask.mjs printed no result: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if (err == nil) != (res.Error == nil) {
		t.Fatalf("node ask.mjs exited with %v but printed error %v", err, res.Error)
	}
	return res
}

// A recorded answer in the AI SDK v5 UI message stream, as the package's
// own writer sends it (JsonToSseTransformStream, UI_MESSAGE_STREAM_HEADERS).
var recordedAnswer = []string{
	`{"type":"start","messageId":"msg-1"}`,
	`{"type":"start-step"}`,
	`{"type":"tool-input-start","toolCallId":"call-1","toolName":"search"}`,
	`{"type":"tool-input-available","toolCallId":"call-1","toolName":"search","input":{"query":"install"}}`,
	`{"type":"tool-output-available","toolCallId":"call-1","output":[{"path":"quickstart","content":"Install with npm.","metadata":{"title":"Quickstart"}}]}`,
	`{"type":"finish-step"}`,
	`{"type":"start-step"}`,
	`{"type":"text-start","id":"t1"}`,
	`{"type":"text-delta","id":"t1","delta":"Run "}`,
	`{"type":"text-delta","id":"t1","delta":"npm i ✓"}`,
	`{"type":"text-end","id":"t1"}`,
	`{"type":"finish-step"}`,
	`{"type":"finish","finishReason":"stop","messageMetadata":{"threadId":"thr-1"}}`,
}

// TestAIClientScript checks the checker: ask.mjs, on recorded streams,
// reports a well-formed answer whole, and fails on each way a stream can
// be wrong that the ai package catches, so that the test against the
// server fails when the server sends one of them.
func TestAIClientScript(t *testing.T) {
	node := servertest.FindNode(t, aiClientDir)
	replace := func(old, new string) []string {
		out := make([]string, len(recordedAnswer))
		for i, c := range recordedAnswer {
			out[i] = strings.Replace(c, old, new, 1)
		}
		return out
	}
	// The requests' bodies and Authorization headers; node runs after the
	// handler returned, so that reading them needs no lock.
	var gotBodies [][]byte
	var gotAuth []string
	serve := func(chunks []string, done bool) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gotAuth = append(gotAuth, r.Header.Get("Authorization"))
			b, _ := io.ReadAll(r.Body)
			gotBodies = append(gotBodies, b)
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
			w.Header().Set("X-Thread-Id", "thr-1")
			w.Header().Set("X-Thread-Key", "secret-1")
			for _, c := range chunks {
				io.WriteString(w, "data: "+c+"\n\n")
			}
			if done {
				io.WriteString(w, "data: [DONE]\n\n")
			}
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}

	t.Run("whole", func(t *testing.T) {
		gotBodies, gotAuth = nil, nil
		res := askWithAIClient(t, node, serve(recordedAnswer, true), "key-1", "/guides/start", "How do I install it?", "And then?")
		if res.Error != nil || len(res.Answers) != 2 {
			t.Fatalf("error %v, %d answers", res.Error, len(res.Answers))
		}
		for _, seen := range res.Answers {
			if seen.Text != "Run npm i ✓" {
				t.Errorf("text %q", seen.Text)
			}
			if len(seen.Tools) != 1 || seen.Tools[0].Name != "search" || seen.Tools[0].State != "output-available" ||
				!strings.Contains(string(seen.Tools[0].Output), `"path":"quickstart"`) {
				t.Errorf("tools %+v", seen.Tools)
			}
			if seen.Metadata["threadId"] != "thr-1" || seen.Headers["x-thread-id"] != "thr-1" || seen.Finish["finishReason"] != "stop" {
				t.Errorf("metadata %v, headers %v, finish %v", seen.Metadata, seen.Headers, seen.Finish)
			}
		}
		// What useChat sends: the hosted fields beside its own, the whole
		// conversation, and in a follow-up the thread's ID and key.
		type request struct {
			Fp          string `json:"fp"`
			CurrentPath string `json:"currentPath"`
			ThreadID    string `json:"threadId"`
			ThreadKey   string `json:"threadKey"`
			Messages    []struct {
				Role  string `json:"role"`
				Parts []struct{ Type, Text string }
			} `json:"messages"`
		}
		var first, second request
		if len(gotBodies) != 2 || json.Unmarshal(gotBodies[0], &first) != nil || json.Unmarshal(gotBodies[1], &second) != nil {
			t.Fatalf("requests: %q", gotBodies)
		}
		if first.Fp != "anonymous" || first.CurrentPath != "/guides/start" || first.ThreadID != "" || first.ThreadKey != "" ||
			len(first.Messages) != 1 || first.Messages[0].Parts[0].Text != "How do I install it?" {
			t.Errorf("first request: %s", gotBodies[0])
		}
		if second.ThreadID != "thr-1" || second.ThreadKey != "secret-1" || len(second.Messages) != 3 ||
			second.Messages[1].Role != "assistant" || second.Messages[2].Parts[0].Text != "And then?" {
			t.Errorf("follow-up: %s", gotBodies[1])
		}
		if !slices.Equal(gotAuth, []string{"Bearer key-1", "Bearer key-1"}) {
			t.Errorf("Authorization %q", gotAuth)
		}
	})

	for name, tc := range map[string]struct {
		chunks []string
		done   bool
		want   string // in the error
	}{
		"a chunk the schema refuses":     {replace(`"delta":"Run "`, `"text":"Run "`), true, "Type validation failed"},
		"an unknown finish reason":       {replace(`"finishReason":"stop"`, `"finishReason":"unknown"`), true, "Type validation failed"},
		"a delta of a text never begun":  {replace(`"id":"t1","delta":"Run "`, `"id":"t2","delta":"Run "`), true, `missing text part with ID "t2"`},
		"an output of a tool not called": {replace(`"toolCallId":"call-1","output"`, `"toolCallId":"call-9","output"`), true, "call-9"},
		"no finish":                      {recordedAnswer[:len(recordedAnswer)-1], false, "without a finish chunk"},
		"an error chunk":                 {append(recordedAnswer[:12:12], `{"type":"error","errorText":"the model is busy"}`), true, "the model is busy"},
	} {
		t.Run(name, func(t *testing.T) {
			res := askWithAIClient(t, node, serve(tc.chunks, tc.done), "key-1", "/", "How?", "And then?")
			if res.Error == nil || !strings.Contains(*res.Error, tc.want) {
				t.Errorf("error %v, want one saying %q", res.Error, tc.want)
			}
			if len(res.Answers) != 1 {
				t.Errorf("%d answers: the script asked on after an error", len(res.Answers))
			}
		})
	}
}

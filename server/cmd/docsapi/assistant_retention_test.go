package main

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/ulid"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// assistant.retention: absent, the server's default; "0s", forever; a
// duration, itself; a negative one refused naming it.
func TestAssistantRetentionConfig(t *testing.T) {
	for _, tc := range []struct {
		file string
		want time.Duration
	}{
		{`{}`, 0},
		{`{"assistant": {}}`, 0},
		{`{"assistant": {"retention": "0s"}}`, -1},
		{`{"assistant": {"retention": "720h"}}`, 720 * time.Hour},
	} {
		cfg, err := decodeConfig([]byte(tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		set := &serveSettings{file: cfg}
		if got := set.serverConfig(nil, nil).AssistantRetention; got != tc.want {
			t.Errorf("%s: AssistantRetention %v, want %v", tc.file, got, tc.want)
		}
	}
	for bad, want := range map[string]string{
		`{"assistant": {"retention": "-1h"}}`: "assistant.retention",
		`{"assistant": {"retention": 90}}`:    "assistant.retention",
		`{"assistant": {"retension": "1h"}}`:  `unknown field "retension"`,
	} {
		if _, err := decodeConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want refused saying %s", bad, err, want)
		}
	}
}

// serve deletes the conversations past the retention as it starts.
func TestServeSweepsConversations(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"DOCSAPI_DATA": data, "HOME": t.TempDir()}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://git.example.com/handbook.git").expect(t, exitOK)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(data, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	ask := func(at time.Time, question string) store.Exchange {
		key := sha256.Sum256([]byte(question))
		x := store.Exchange{ID: ulid.New(at), QuestionID: ulid.New(at), ProjectID: "handbook", ThreadID: ulid.New(at), Question: question, AskedAt: at,
			Answer: "a", AnsweredAt: at, ResponseType: store.ResponseAnswer, Resolution: store.Answered, Caller: store.CallerWeb}
		th := &store.Thread{ID: x.ThreadID, ProjectID: "handbook", KeyHash: key[:], Fp: "anonymous", Caller: store.CallerWeb, CreatedAt: at}
		if err := st.AddExchange(ctx, x, th); err != nil {
			t.Fatal(err)
		}
		return x
	}
	ask(now.AddDate(0, 0, -40), "forty days ago")
	recent := ask(now.AddDate(0, 0, -1), "yesterday")
	st.Close()

	config := configFile(t, `{"assistant": {"retention": "720h"}}`)
	_, logs, stop := serveInProcess(t, env, "--config", config)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), `"msg":"server: deleted assistant conversations past their retention","exchanges":1`) {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("serve did not sweep within 30s:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, logs)
	}
	st, err = sqlite.Open(ctx, filepath.Join(data, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	page, err := st.QueryConversations(ctx, store.ConversationsQuery{ProjectID: "handbook", Limit: 10})
	if err != nil || len(page.Exchanges) != 1 || page.Exchanges[0].ID != recent.ID {
		t.Errorf("after serve's sweep the store holds %+v, %v; want yesterday's alone", page.Exchanges, err)
	}
}

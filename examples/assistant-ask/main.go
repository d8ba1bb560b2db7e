// Command assistant-ask asks a documentation site's assistant a question
// and prints the answer as it is written, then the pages it drew on.
//
// It shows Assistant.Ask, the answer's events (text deltas, the search
// tool's sources, the finish), and threads: with -thread FILE, the first
// answer's thread ID and key are kept in FILE (readable by you alone), and
// every later run with the same FILE continues that conversation. The key
// is a secret the service gives only once; the program never prints it.
//
// Run it with an assistant key (not an admin key) and the site's domain
// identifier (the "acme" of acme.mintlify.site):
//
//	export DOCSAPI_ASSISTANT_KEY=mint_dsc_...
//	export DOCSAPI_BASE_URL=http://localhost:8080/api   # optional: a self-hosted server
//	go run ./examples/assistant-ask -domain acme -thread ~/.acme-thread "How do I install the CLI?"
//	go run ./examples/assistant-ask -domain acme -thread ~/.acme-thread "And on Windows?"
//
// The answer goes to standard output as it comes, followed by
//
//	Sources:
//	  Quickstart  https://acme.dev/quickstart
//
// Errors end it with a message on standard error and exit status 1; an
// answer cut short says so rather than passing for a short answer.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	docsapi "github.com/docsapi/docsapi-go"
)

type config struct {
	key, baseURL string // from the environment
	domain       string
	threadFile   string // "" keeps no thread
	question     string
}

func main() {
	domain := flag.String("domain", "", "the site's domain identifier (required)")
	thread := flag.String("thread", "", "a file that keeps the conversation's thread between runs")
	flag.Parse()
	cfg := config{
		key:        os.Getenv("DOCSAPI_ASSISTANT_KEY"),
		baseURL:    os.Getenv("DOCSAPI_BASE_URL"),
		domain:     *domain,
		threadFile: *thread,
		question:   strings.Join(flag.Args(), " "),
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "assistant-ask:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	switch {
	case cfg.key == "":
		return errors.New("DOCSAPI_ASSISTANT_KEY is not set: export an assistant key (mint_dsc_...)")
	case cfg.domain == "":
		return errors.New("-domain is required: the site's domain identifier")
	case strings.TrimSpace(cfg.question) == "":
		return errors.New("no question: give it after the flags")
	}
	opts := []docsapi.Option{docsapi.WithUserAgent("assistant-ask-example")}
	if cfg.baseURL != "" {
		opts = append(opts, docsapi.WithBaseURL(cfg.baseURL))
	}
	client, err := docsapi.NewClient(cfg.key, opts...)
	if err != nil {
		return err
	}

	params := docsapi.AskParams{
		Messages:          []docsapi.AskMessage{{Text: cfg.question}},
		RetrievalPageSize: 5,
	}
	if cfg.threadFile != "" {
		if params.ThreadID, params.ThreadKey, err = loadThread(cfg.threadFile); err != nil {
			return err
		}
	}
	stream, err := client.Assistant.Ask(ctx, cfg.domain, params)
	if err != nil {
		if errors.Is(err, docsapi.ErrNotFound) && params.ThreadID != "" {
			return fmt.Errorf("the service does not know thread %s with this key (delete %s to start a new one): %w", params.ThreadID, cfg.threadFile, err)
		}
		return err
	}
	defer stream.Close()
	// A new thread's key comes with the headers, once: keep it before
	// reading, so that an answer cut short does not lose the thread.
	if cfg.threadFile != "" && !stream.ThreadKey().IsZero() {
		if err := saveThread(cfg.threadFile, stream.ThreadID(), stream.ThreadKey()); err != nil {
			return err
		}
	}

	var sources []docsapi.AnswerSource
	for ev, err := range stream.Events() {
		if err != nil {
			fmt.Fprintln(stdout)
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("the answer was cut short: %w", err)
			}
			return err
		}
		switch ev.Type {
		case docsapi.AssistantEventTextDelta:
			io.WriteString(stdout, ev.Delta)
		case docsapi.AssistantEventToolOutputAvailable:
			if ev.ToolName == docsapi.AssistantSearchTool {
				sources = append(sources, ev.Sources...)
			}
		case docsapi.AssistantEventError:
			fmt.Fprintf(stdout, "\n[the assistant reported an error: %s]\n", ev.ErrorText)
		}
	}
	fmt.Fprintln(stdout)
	if len(sources) > 0 {
		fmt.Fprintln(stdout, "Sources:")
		for _, s := range sources {
			link := s.URL
			if link == "" {
				link = s.Path
			}
			fmt.Fprintf(stdout, "  %s  %s\n", orUntitled(s.Title), link)
		}
	}
	return nil
}

func orUntitled(title string) string {
	if title == "" {
		return "(untitled)"
	}
	return title
}

// loadThread reads the thread ID and key a first answer left in file; a
// missing file is no thread yet.
func loadThread(file string) (string, docsapi.ThreadKey, error) {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", docsapi.ThreadKey{}, nil
	}
	if err != nil {
		return "", docsapi.ThreadKey{}, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return "", docsapi.ThreadKey{}, err
	}
	if len(lines) != 2 || lines[0] == "" || lines[1] == "" {
		return "", docsapi.ThreadKey{}, fmt.Errorf("%s does not hold a thread ID and key, one a line", file)
	}
	return lines[0], docsapi.NewThreadKey(lines[1]), nil
}

// saveThread keeps a thread's ID and key in file, readable by its owner
// alone: the key continues the conversation.
func saveThread(file, id string, key docsapi.ThreadKey) error {
	return os.WriteFile(file, []byte(id+"\n"+key.Value()+"\n"), 0o600)
}

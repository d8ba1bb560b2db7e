// Package runner assembles the parts a project's jobs run with (the git
// workspace, the pull-request host and the agent) from the server's
// configuration, for the job engine's Config.Parts.
//
// Every project's parts are built once, by New, so a configuration mistake
// (an unknown agent, a missing token) stops the server at start-up instead
// of failing the first job.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"

	"github.com/docsapi/docsapi-go/server/agent/command"
	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/github"
	"github.com/docsapi/docsapi-go/server/githost/gitlab"
	"github.com/docsapi/docsapi-go/server/githost/pushonly"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/store"
)

// Config configures the parts of every project.
type Config struct {
	// Git holds the git settings every project shares (author, folder,
	// timeout, environment). Its Credentials is set per project from the
	// project's host token; leave it empty.
	Git gitrepo.Config
	// Projects maps a project ID to how its jobs run.
	Projects map[string]Project
	// Logger is given to every part that logs.
	Logger *slog.Logger
}

// Project says where a project's pull requests go and which agent edits it.
type Project struct {
	Host  Host
	Agent Agent
}

// HostKind names a pull-request host.
type HostKind string

// The hosts.
const (
	GitHub   HostKind = "github"    // pull requests on GitHub.com or GitHub Enterprise
	GitLab   HostKind = "gitlab"    // merge requests on GitLab.com or self-managed GitLab
	PushOnly HostKind = "push-only" // the branch is pushed; no pull request (prLink stays null)
)

// Host configures a project's pull-request host. The host's token also
// authenticates git over HTTPS, as the username each host expects
// ("x-access-token" on GitHub, "oauth2" on GitLab).
type Host struct {
	Kind   HostKind
	GitHub github.Config // for Kind GitHub
	GitLab gitlab.Config // for Kind GitLab
	// GitUsername and GitPassword authenticate git over HTTPS for a
	// push-only project; unused by the other kinds.
	GitUsername, GitPassword string
}

// AgentKind names an agent.
type AgentKind string

// The agents.
const (
	Command AgentKind = "command" // a CLI coding agent run in the workspace
	LLM     AgentKind = "llm"     // a tool-use loop against a chat-completions or Messages API
)

// Agent configures a project's agent.
type Agent struct {
	Kind    AgentKind
	Command command.Config // for Kind Command
	LLM     llm.Config     // for Kind LLM
}

// Model names what runs the agent's jobs, for a project that names no model
// of its own (its store.Project.Model, which jobs report): the llm agent's
// model, or the command agent's Config.Model, else its program's base name
// ("claude" for /usr/local/bin/claude). It is "" for an llm agent without
// a model, whose model must then come from the project.
//
// A project's model is also handed to the agent (engine.Task.Model, which
// fills a command's {model}): a command's base name must not take the place
// of a real model there, so set the project's model when the arguments use
// {model}.
func (a Agent) Model() string {
	switch a.Kind {
	case LLM:
		return a.LLM.Model
	case Command:
		if a.Command.Model != "" {
			return a.Command.Model
		}
		if a.Command.Command != "" {
			return filepath.Base(a.Command.Command)
		}
	}
	return ""
}

// Runner hands the engine each project's parts.
type Runner struct {
	parts map[string]engine.Parts
}

// New builds the parts of every configured project.
func New(cfg Config) (*Runner, error) {
	if len(cfg.Projects) == 0 {
		return nil, errors.New("runner: no project is configured")
	}
	r := &Runner{parts: make(map[string]engine.Parts, len(cfg.Projects))}
	ids := make([]string, 0, len(cfg.Projects))
	for id := range cfg.Projects {
		ids = append(ids, id)
	}
	sort.Strings(ids) // the first error reported is the same every time
	for _, id := range ids {
		parts, err := build(cfg, cfg.Projects[id])
		if err != nil {
			return nil, fmt.Errorf("runner: project %q: %w", id, err)
		}
		r.parts[id] = parts
	}
	return r, nil
}

// Parts returns the project's parts; it is the engine's Config.Parts.
func (r *Runner) Parts(_ context.Context, p store.Project) (engine.Parts, error) {
	parts, ok := r.parts[p.ID]
	if !ok {
		return engine.Parts{}, fmt.Errorf("no runner is configured for project %q: add it to the server's configuration", p.ID)
	}
	return parts, nil
}

func build(cfg Config, p Project) (engine.Parts, error) {
	var parts engine.Parts
	git := cfg.Git
	if git.Credentials != nil {
		return parts, errors.New("set git credentials through the project's host, not Config.Git.Credentials")
	}
	if git.Logger == nil {
		git.Logger = cfg.Logger
	}
	switch p.Host.Kind {
	case GitHub:
		hc := p.Host.GitHub
		hc.Logger = or(hc.Logger, cfg.Logger)
		host, err := github.New(hc)
		if err != nil {
			return parts, err
		}
		parts.PullRequests = host
		git.Credentials = tokenCredentials("x-access-token", hc.Token, hc.TokenFunc)
	case GitLab:
		hc := p.Host.GitLab
		hc.Logger = or(hc.Logger, cfg.Logger)
		host, err := gitlab.New(hc)
		if err != nil {
			return parts, err
		}
		parts.PullRequests = host
		git.Credentials = tokenCredentials("oauth2", hc.Token, hc.TokenFunc)
	case PushOnly:
		parts.PullRequests = pushonly.Host{}
		if p.Host.GitPassword != "" {
			git.Credentials = tokenCredentials(p.Host.GitUsername, p.Host.GitPassword, nil)
		}
	default:
		return parts, fmt.Errorf("unknown host kind %q (want %q, %q or %q)", p.Host.Kind, GitHub, GitLab, PushOnly)
	}
	repos, err := gitrepo.New(git)
	if err != nil {
		return parts, err
	}
	parts.Repositories = repos
	switch p.Agent.Kind {
	case Command:
		ac := p.Agent.Command
		ac.Logger = or(ac.Logger, cfg.Logger)
		if ac.Dir == "" {
			// The runs' folders in one place: workspaces and agent homes
			// alike are swept there at start-up.
			ac.Dir = git.Dir
		}
		parts.Agent, err = command.New(ac)
	case LLM:
		ac := p.Agent.LLM
		ac.Logger = or(ac.Logger, cfg.Logger)
		parts.Agent, err = llm.New(ac)
	default:
		err = fmt.Errorf("unknown agent kind %q (want %q or %q)", p.Agent.Kind, Command, LLM)
	}
	return parts, err
}

// tokenCredentials gives git the host's token, fetched afresh each time git
// asks, so short-lived tokens work for long runs.
func tokenCredentials(username, token string, tokenFunc func(context.Context) (string, error)) func(context.Context, string) (string, string, error) {
	return func(ctx context.Context, _ string) (string, string, error) {
		if tokenFunc == nil {
			return username, token, nil
		}
		t, err := tokenFunc(ctx)
		return username, t, err
	}
}

func or(l, def *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return def
}

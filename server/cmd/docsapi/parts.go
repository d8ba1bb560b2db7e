package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server"
	commandagent "github.com/docsapi/docsapi-go/server/agent/command"
	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/docs"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/github"
	"github.com/docsapi/docsapi-go/server/githost/gitlab"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/runner"
	"github.com/docsapi/docsapi-go/server/store"
)

// This file turns the configuration's projects into what serve runs them
// with: each project's host and agent, secrets read (resolveProjects), the
// runner parts the engine takes (buildParts), and the projects the storage
// holds (syncProjects).

// maxSecretFileBytes bounds a token or key file: a secret is short, and a
// path pointing at the wrong, large file should fail rather than be sent.
const maxSecretFileBytes = 64 << 10

// resolvedProjects is the configuration's projects, secrets read: what the
// runner needs, and what the store should hold.
type resolvedProjects struct {
	runner   map[string]runner.Project
	docs     map[string]docs.Options // how each project's files map to pages
	store    []store.Project
	warnings []string
	// assistant holds the projects that have an assistant model.
	assistant map[string]server.AssistantModel
}

// resolveProjects checks the projects of the configuration and reads the
// secrets they name from the environment or from files. Errors name the
// project and the field, never a secret's value.
func resolveProjects(cfg *fileConfig, getenv func(string) string) (resolvedProjects, error) {
	out := resolvedProjects{runner: map[string]runner.Project{}, docs: map[string]docs.Options{}, assistant: map[string]server.AssistantModel{}}
	for i, p := range cfg.Projects {
		where := fmt.Sprintf("projects[%d]", i)
		if p.ID != "" {
			where += fmt.Sprintf(" (%q)", p.ID)
		}
		if p.ID == "" {
			return out, fmt.Errorf("%s: id is required", where)
		}
		if _, dup := out.runner[p.ID]; dup {
			return out, fmt.Errorf("%s: the id is used by an earlier project too", where)
		}
		if p.Repository == "" {
			return out, fmt.Errorf("%s: repository is required (a clone URL or a local path)", where)
		}
		if err := checkDomain(where, p.Domain, cfg.Projects[:i]); err != nil {
			return out, err
		}
		if root := strings.Trim(p.DocsRoot, "/"); root != "" && !fs.ValidPath(root) {
			return out, fmt.Errorf("%s: docsRoot %q is not a folder path inside the repository", where, p.DocsRoot)
		}
		out.docs[p.ID] = docs.Options{Root: p.DocsRoot, Exclude: p.DocsExclude}
		if u, err := url.Parse(p.Repository); err == nil && u.User != nil {
			return out, fmt.Errorf("%s: repository must not contain credentials: jobs show it to API clients; give the token with host.tokenEnv or host.tokenFile", where)
		}
		host, warn, err := resolveHost(where+".host", p.Host, getenv)
		if err != nil {
			return out, err
		}
		if warn != "" {
			out.warnings = append(out.warnings, warn)
		}
		model := p.Model
		agent, warns, err := resolveAgent(where+".agent", p.Agent, &model, getenv)
		if err != nil {
			return out, err
		}
		out.warnings = append(out.warnings, warns...)
		am, warns, err := resolveAssistantModel(where, p, model, getenv)
		if err != nil {
			return out, err
		}
		out.warnings = append(out.warnings, warns...)
		if am.Chat != nil {
			out.assistant[p.ID] = am
		}
		out.runner[p.ID] = runner.Project{Host: host, Agent: agent}
		out.store = append(out.store, store.Project{ID: p.ID, Name: p.Name, Repository: p.Repository, Ref: p.Ref, Model: model, Domain: p.Domain})
	}
	return out, nil
}

func resolveHost(where string, h hostConfig, getenv func(string) string) (runner.Host, string, error) {
	hasToken := h.TokenEnv != "" || h.TokenFile != ""
	var token, warn string
	if hasToken {
		var err error
		if token, warn, err = readSecret(where, "token", h.TokenEnv, h.TokenFile, getenv); err != nil {
			return runner.Host{}, "", err
		}
	}
	switch runner.HostKind(h.Kind) {
	case runner.GitHub, runner.GitLab:
		if !hasToken {
			return runner.Host{}, "", fmt.Errorf("%s: kind %s needs a token: name the environment variable with tokenEnv, or a file with tokenFile", where, h.Kind)
		}
		if h.Username != "" {
			return runner.Host{}, "", fmt.Errorf("%s: username is for kind push-only; %s uses its own", where, h.Kind)
		}
		if h.Kind == string(runner.GitHub) {
			return runner.Host{Kind: runner.GitHub, GitHub: github.Config{Token: token, BaseURL: h.BaseURL, Draft: h.Draft, RepositoryHosts: h.RepositoryHosts}}, warn, nil
		}
		return runner.Host{Kind: runner.GitLab, GitLab: gitlab.Config{Token: token, BaseURL: h.BaseURL, Draft: h.Draft, RepositoryHosts: h.RepositoryHosts}}, warn, nil
	case runner.PushOnly:
		if h.BaseURL != "" || h.Draft || len(h.RepositoryHosts) > 0 {
			return runner.Host{}, "", fmt.Errorf("%s: baseURL, draft and repositoryHosts are for kinds github and gitlab; push-only opens no pull request", where)
		}
		host := runner.Host{Kind: runner.PushOnly}
		if hasToken {
			// Most git servers accept a token as the password with any user
			// name; "git" is a harmless default.
			host.GitUsername, host.GitPassword = or(h.Username, "git"), token
		} else if h.Username != "" {
			return runner.Host{}, "", fmt.Errorf("%s: username without a token: add tokenEnv or tokenFile, or remove username", where)
		}
		return host, warn, nil
	case "":
		return runner.Host{}, "", fmt.Errorf("%s: kind is required: github, gitlab or push-only", where)
	}
	return runner.Host{}, "", fmt.Errorf("%s: unknown kind %q: use github, gitlab or push-only", where, h.Kind)
}

func resolveAgent(where string, a agentConfig, model *string, getenv func(string) string) (runner.Agent, []string, error) {
	commandFields := map[string]bool{
		"command": a.Command != "", "args": len(a.Args) > 0, "promptVia": a.PromptVia != "", "timeout": a.Timeout != 0,
		"maxOutputBytes": a.MaxOutputBytes != 0, "passEnv": len(a.PassEnv) > 0, "env": len(a.Env) > 0,
		"sandbox": !a.Sandbox.isZero(), "maxWorkspaceGrowth": a.MaxWorkspaceGrowth != 0, "maxWorkspaceFiles": a.MaxWorkspaceFiles != 0,
	}
	llmFields := map[string]bool{
		"provider": a.Provider != "", "baseURL": a.BaseURL != "", "model": a.Model != "", "apiKeyEnv": a.APIKeyEnv != "",
		"apiKeyFile": a.APIKeyFile != "", "anthropicVersion": a.AnthropicVersion != "", "instructions": a.Instructions != "",
		"limits": a.Limits != (llmLimits{}),
	}
	// A field of the other kind would be silently ignored; say so instead.
	misplaced := func(fields map[string]bool, kind string) error {
		for _, name := range sortedKeys(fields) {
			if fields[name] {
				return fmt.Errorf("%s: %s is a field of kind %s, not %s", where, name, kind, a.Kind)
			}
		}
		return nil
	}
	switch runner.AgentKind(a.Kind) {
	case runner.Command:
		if err := misplaced(llmFields, "llm"); err != nil {
			return runner.Agent{}, nil, err
		}
		if a.Command == "" {
			return runner.Agent{}, nil, fmt.Errorf("%s: command is required: the program to run (a name in PATH or a path)", where)
		}
		sb, warn, err := resolveSandbox(where, a.Sandbox)
		if err != nil {
			return runner.Agent{}, nil, err
		}
		workspace := a.workspaceLimits()
		if err := workspace.Check(func(field string) string { return workspaceLimitKeys[field] }); err != nil {
			return runner.Agent{}, nil, fmt.Errorf("%s: %w", where, err)
		}
		var warns []string
		if warn != "" {
			warns = append(warns, warn)
		}
		if a.PromptVia == string(commandagent.PromptArg) || slices.ContainsFunc(a.Args, func(arg string) bool { return strings.Contains(arg, "{prompt}") }) {
			warns = append(warns, where+": "+commandagent.PromptArgWarning)
		}
		agent := runner.Agent{Kind: runner.Command, Command: commandagent.Config{
			Command: a.Command, Args: a.Args, PromptVia: commandagent.PromptVia(a.PromptVia), Timeout: time.Duration(a.Timeout),
			MaxOutputBytes: a.MaxOutputBytes, PassEnv: a.PassEnv, Env: a.Env, Sandbox: sb, Workspace: workspace,
		}}
		if *model == "" {
			// Jobs name what runs them, as the hosted service's do: with no
			// model, the program. The project's model also fills {model},
			// where a program's name would be no model at all.
			if i := slices.IndexFunc(a.Args, func(arg string) bool { return strings.Contains(arg, "{model}") }); i >= 0 {
				return runner.Agent{}, nil, fmt.Errorf("%s: args[%d] uses {model}, but the project names no model: set the project's model", where, i)
			}
			*model = agent.Model()
		}
		return agent, warns, nil
	case runner.LLM:
		if err := misplaced(commandFields, "command"); err != nil {
			return runner.Agent{}, nil, err
		}
		// Jobs report the project's model, and the engine hands it to the
		// agent; one model named in two places that disagree would make
		// jobs report a model they did not use.
		switch {
		case *model == "":
			*model = a.Model
		case a.Model != "" && a.Model != *model:
			return runner.Agent{}, nil, fmt.Errorf("%s: model %q differs from the project's model %q, which is the one jobs use: set it in one place", where, a.Model, *model)
		}
		if *model == "" {
			return runner.Agent{}, nil, fmt.Errorf("%s: a model is required: set the project's model or agent.model", where)
		}
		var key string
		var warns []string
		if a.APIKeyEnv != "" || a.APIKeyFile != "" {
			k, warn, err := readSecret(where, "apiKey", a.APIKeyEnv, a.APIKeyFile, getenv)
			if err != nil {
				return runner.Agent{}, nil, err
			}
			if key = k; warn != "" {
				warns = append(warns, warn)
			}
		}
		return runner.Agent{Kind: runner.LLM, LLM: llm.Config{
			Provider: llm.Provider(a.Provider), BaseURL: a.BaseURL, Model: *model, APIKey: key,
			AnthropicVersion: a.AnthropicVersion, Instructions: a.Instructions,
			MaxTurns: a.Limits.MaxTurns, MaxTokens: a.Limits.MaxTokens, MaxFileBytes: a.Limits.MaxFileBytes,
			MaxChangedBytes: a.Limits.MaxChangedBytes, RequestTimeout: time.Duration(a.Limits.RequestTimeout),
			MaxRetries: a.Limits.MaxRetries,
		}}, warns, nil
	case "":
		return runner.Agent{}, nil, fmt.Errorf("%s: kind is required: command or llm", where)
	}
	return runner.Agent{}, nil, fmt.Errorf("%s: unknown kind %q: use command or llm", where, a.Kind)
}

func (s sandboxConfig) isZero() bool {
	return !s.Off && len(s.AllowHosts) == 0 && len(s.AllowAddresses) == 0 && len(s.ReadOnly) == 0 && s.Bwrap == "" && s.limits() == (sandbox.Limits{})
}

// limits returns the sandbox's resource limits as the configuration gives
// them (0: the default).
func (s sandboxConfig) limits() sandbox.Limits {
	return sandbox.Limits{MaxProcesses: s.MaxProcesses, Memory: int64(s.Memory), TmpSize: int64(s.TmpSize),
		ShmSize: int64(s.ShmSize), HomeSize: int64(s.HomeSize)}
}

// sandboxLimitKeys are the configuration's keys of sandbox.Limits' fields.
var sandboxLimitKeys = map[string]string{"MaxProcesses": "sandbox.maxProcesses", "Memory": "sandbox.memory",
	"TmpSize": "sandbox.tmpSize", "ShmSize": "sandbox.shmSize", "HomeSize": "sandbox.homeSize"}

// workspaceLimits returns a command agent's workspace limits as the
// configuration gives them (0: the default).
func (a agentConfig) workspaceLimits() commandagent.WorkspaceLimits {
	return commandagent.WorkspaceLimits{MaxGrowth: int64(a.MaxWorkspaceGrowth), MaxFiles: a.MaxWorkspaceFiles}
}

// workspaceLimitKeys are the configuration's keys of
// commandagent.WorkspaceLimits' fields.
var workspaceLimitKeys = map[string]string{"MaxGrowth": "maxWorkspaceGrowth", "MaxFiles": "maxWorkspaceFiles"}

// bridgeCommand is the hidden command that runs the sandbox's network
// bridge (sandbox.BridgeMain): the sandbox starts this program with it.
const bridgeCommand = "sandbox-bridge"

// resolveSandbox turns an agent's "sandbox" into the command agent's
// sandbox settings. With allowHosts, the bridge that the sandbox runs is this
// very program (its sandbox-bridge command). "off" comes with a warning that
// serve logs at every start.
func resolveSandbox(where string, s sandboxConfig) (sandbox.Config, string, error) {
	if s.Off {
		return sandbox.Config{Mode: sandbox.Off},
			where + `: sandbox is "off": the command agent runs as the server's user, and can read the server's environment, configuration and secret files, reach any host, and leave processes behind`, nil
	}
	limits := s.limits()
	if err := limits.Check(func(field string) string { return sandboxLimitKeys[field] }); err != nil {
		return sandbox.Config{}, "", fmt.Errorf("%s: %s", where, strings.TrimPrefix(err.Error(), "sandbox: "))
	}
	cfg := sandbox.Config{Bwrap: s.Bwrap, ReadOnly: s.ReadOnly, AllowHosts: s.AllowHosts, AllowAddresses: s.AllowAddresses, Limits: limits}
	if len(s.AllowHosts) > 0 {
		self, err := os.Executable()
		if err != nil {
			return sandbox.Config{}, "", fmt.Errorf("%s: sandbox.allowHosts needs this program's path, for the sandbox's network bridge: %w", where, err)
		}
		cfg.Bridge = []string{self, bridgeCommand}
	}
	return cfg, "", nil
}

// readSecret reads the secret named by field+"Env" or field+"File". The
// value never appears in an error; a file others can read gives a warning.
func readSecret(where, field, envName, file string, getenv func(string) string) (value, warning string, err error) {
	switch {
	case envName != "" && file != "":
		return "", "", fmt.Errorf("%s: set %sEnv or %sFile, not both", where, field, field)
	case envName != "":
		value = strings.TrimSpace(getenv(envName))
		if value == "" {
			return "", "", fmt.Errorf("%s: %sEnv names the environment variable %s, which is not set or empty: export it before starting the server", where, field, envName)
		}
		return value, "", nil
	}
	f, err := os.Open(file)
	if err != nil {
		return "", "", fmt.Errorf("%s: %sFile: %w", where, field, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", "", fmt.Errorf("%s: %sFile: %w", where, field, err)
	}
	if fi.Size() > maxSecretFileBytes {
		return "", "", fmt.Errorf("%s: %sFile %s is %d bytes, too large for a secret: is it the right file?", where, field, file, fi.Size())
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && fi.Size() > 0 {
		return "", "", fmt.Errorf("%s: %sFile: %w", where, field, err)
	}
	value = strings.TrimSpace(string(b))
	if value == "" {
		return "", "", fmt.Errorf("%s: %sFile %s is empty", where, field, file)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		warning = fmt.Sprintf("%s: %sFile %s can be read by other users (mode %s); consider chmod 600", where, field, file, fi.Mode().Perm())
	}
	return value, warning, nil
}

// syncProjects makes the store hold the configured projects: it creates the
// missing ones and updates the repository, ref, model and domain (and the
// name, when the configuration gives one) of those that differ. Projects
// only in the store are left alone, with a warning, since their jobs
// cannot run, except that one loses a domain the file gives to another
// (releaseDomains).
func syncProjects(ctx context.Context, srv *server.Server, st store.Store, want []store.Project, log *slog.Logger) error {
	if err := releaseDomains(ctx, st, want, log); err != nil {
		return err
	}
	configured := map[string]bool{}
	for _, p := range want {
		configured[p.ID] = true
		have, err := st.Project(ctx, p.ID)
		if errors.Is(err, store.ErrNotFound) {
			_, cerr := srv.CreateProject(ctx, p)
			if cerr == nil {
				log.Info("docsapi: project created from the configuration", slog.String("project_id", p.ID))
				continue
			}
			// Replicas sharing a database start together: another one may
			// have created the project meanwhile, which is fine.
			if have, err = st.Project(ctx, p.ID); err != nil {
				return cerr
			}
		} else if err != nil {
			return fmt.Errorf("reading project %q: %w", p.ID, err)
		}
		updated := have
		updated.Repository, updated.Ref, updated.Model, updated.Domain = p.Repository, p.Ref, p.Model, p.Domain
		if p.Name != "" {
			updated.Name = p.Name
		}
		if updated == have {
			continue
		}
		if err := st.UpdateProject(ctx, updated); err != nil {
			return fmt.Errorf("updating project %q: %w", p.ID, err)
		}
		log.Info("docsapi: project updated from the configuration", slog.String("project_id", p.ID),
			slog.String("repository", updated.Repository), slog.String("ref", updated.Ref), slog.String("model", updated.Model),
			slog.String("domain", updated.Domain))
	}
	all, err := st.Projects(ctx)
	if err != nil {
		return fmt.Errorf("listing projects: %w", err)
	}
	for _, p := range all {
		if !configured[p.ID] {
			log.Warn("docsapi: project has no agent or host in the configuration; its jobs will fail until it is added",
				slog.String("project_id", p.ID))
		}
	}
	return nil
}

// buildParts builds every project's runner parts, or, with no project
// configured, parts that fail each job with a message saying what to do.
func buildParts(g gitConfig, projects resolvedProjects, log *slog.Logger) (func(context.Context, store.Project) (engine.Parts, error), error) {
	if len(projects.runner) == 0 {
		log.Warn("docsapi: no project is configured, so agent jobs will fail; page views and the API work")
		return func(_ context.Context, p store.Project) (engine.Parts, error) {
			return engine.Parts{}, engine.Permanent(fmt.Errorf("no runner is configured for project %q: add it to the server's configuration file", p.ID))
		}, nil
	}
	if g.WorkDir != "" {
		if err := os.MkdirAll(g.WorkDir, 0o700); err != nil {
			return nil, fmt.Errorf("git.workDir: %w", err)
		}
	}
	r, err := runner.New(runner.Config{
		Git:      g.config(log),
		Projects: projects.runner,
		Logger:   log,
	})
	if err != nil {
		return nil, err
	}
	return r.Parts, nil
}

// config is the file's git settings as package gitrepo takes them; zero
// values stand for its defaults.
func (g gitConfig) config(log *slog.Logger) gitrepo.Config {
	return gitrepo.Config{Git: g.Binary, Dir: g.WorkDir, AuthorName: g.AuthorName, AuthorEmail: g.AuthorEmail,
		Timeout: time.Duration(g.Timeout), Env: g.Env, MirrorIdle: time.Duration(g.MirrorIdle),
		MaxPublishFiles: g.MaxPublishFiles, MaxPublishBytes: g.MaxPublishBytes, Logger: log}
}

// projectRuns is serve's server.Config.Runs: a project's jobs run here
// when the configuration gives it a runner, so that a job for any other is
// refused when it is created, not failed when an engine claims it.
func projectRuns(parts func(context.Context, store.Project) (engine.Parts, error)) func(context.Context, store.Project) error {
	return func(ctx context.Context, p store.Project) error {
		if _, err := parts(ctx, p); err != nil {
			return errors.New("the server's configuration has no runner for it (add the project, with its host and agent, to the configuration file)")
		}
		return nil
	}
}

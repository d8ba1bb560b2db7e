package hostkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/docsapi/docsapi-go/server/engine"
)

// Names are the words one host's messages use, so that what Ensurer says
// reads as that host's own.
type Names struct {
	// Package prefixes every error, as "github".
	Package string
	// Service names the host in sentences, as "GitHub".
	Service string
	// Kind is what the host calls a pull request, as "merge request".
	Kind string
	// Repository is what the host calls a repository, as "project".
	Repository string
}

// Listed is one pull request from a host's list, reduced to what Ensurer
// checks before it takes it as the job's.
type Listed struct {
	// Open is true while the pull request is open.
	Open bool
	// Head and Base are its source and target branches.
	Head, Base string
	// Foreign is true when its head branch is in another repository than
	// the one it targets (a fork's branch of the same name).
	Foreign bool
	// URL is its web page.
	URL string
}

// NewPR is the pull request Ensurer asks a host to open.
type NewPR struct {
	Head, Base, Title, Body string
}

// API is what Ensurer needs from one host's REST API. Each host implements
// it over its own library and returns that library's errors as they are:
// Ensurer describes them and decides which are permanent, so that both
// hosts' errors read and classify alike.
type API[R fmt.Stringer] interface {
	// Repository reads a clone URL into the host's name for the
	// repository, without a request. Its errors are permanent, and must not
	// repeat the URL's user information (see Redact).
	Repository(raw string) (R, error)
	// Lookup asks the host about repo when it must: for its default
	// branch when needDefault is set, and for whatever the later calls
	// need. It returns repo as those calls take it, and the default branch.
	Lookup(ctx context.Context, repo R, needDefault bool) (R, string, error)
	// ListOpen lists the open pull requests from head into base.
	ListOpen(ctx context.Context, repo R, head, base string) ([]Listed, error)
	// Create opens a pull request and returns its web URL.
	Create(ctx context.Context, repo R, pr NewPR) (string, error)
	// AlreadyExists reports whether err, from Create, is the host's
	// refusal of a second open pull request from the same branch.
	AlreadyExists(err error) bool
	// Permanent reports whether err, from any other method, is an answer
	// of the host that no retry can change. Token errors are decided by
	// Ensurer.
	Permanent(err error) bool
}

// Ensurer is the engine.PullRequests.Ensure of every host, over its API. It
// holds the rule the engine relies on, one pull request per job: a job's
// branch name is fixed, so Ensure looks for an open pull request from it
// before opening one, and when the host refuses the create because another
// run opened it meanwhile, it looks again and returns that one. The zero
// value is not usable; fill every field.
type Ensurer[R fmt.Stringer] struct {
	Names Names
	API   API[R]
	// Log receives the pull requests found and opened, at info level.
	Log *slog.Logger
}

// Ensure returns the web URL of the open pull request from spec.Branch into
// spec.Base (the repository's default branch when empty), opening it only
// when none is open. Errors no retry can mend are marked engine.Permanent.
func (e *Ensurer[R]) Ensure(ctx context.Context, spec engine.PullRequestSpec) (string, error) {
	n := e.Names
	if spec.Branch == "" || spec.Title == "" {
		return "", engine.Permanent(fmt.Errorf("%s: a %s needs a branch and a title", n.Package, n.Kind))
	}
	named, err := e.API.Repository(spec.Repository)
	if err != nil {
		return "", engine.Permanent(fmt.Errorf("%s: %w", n.Package, err))
	}
	base := Branch(spec.Base)
	repo, def, err := e.API.Lookup(ctx, named, base == "")
	if err != nil {
		return "", e.classify(err, "reading the %s %s", n.Repository, named)
	}
	if base == "" {
		if base = def; base == "" {
			return "", engine.Permanent(fmt.Errorf("%s: the %s %s has no default branch", n.Package, n.Repository, repo))
		}
	}
	log := e.Log.With(slog.String("repository", repo.String()), slog.String("branch", spec.Branch), slog.String("base", base))

	if url, err := e.find(ctx, repo, spec.Branch, base); err != nil || url != "" {
		if url != "" {
			log.Info("githost: "+n.Kind+" already open", slog.String("url", url))
		}
		return url, err
	}
	url, err := e.API.Create(ctx, repo, NewPR{Head: spec.Branch, Base: base, Title: spec.Title, Body: spec.Body})
	switch {
	case err == nil:
		if url == "" {
			return "", fmt.Errorf("%s: the %s opened from %s into %s in %s has no web URL", n.Package, n.Kind, spec.Branch, base, repo)
		}
		log.Info("githost: "+n.Kind+" opened", slog.String("url", url))
		return url, nil
	case e.API.AlreadyExists(err):
		// Another run opened it between our list and our create.
		url, ferr := e.find(ctx, repo, spec.Branch, base)
		if ferr != nil || url != "" {
			if url != "" {
				log.Info("githost: "+n.Kind+" opened meanwhile by another run", slog.String("url", url))
			}
			return url, ferr
		}
		// Not listed yet (a host's lists can lag behind its writes), or
		// closed again meanwhile: a retry will tell, so this is transient.
		return "", fmt.Errorf("%s: %s reports an open %s from %s in %s, but none into %s is listed yet", n.Package, n.Service, n.Kind, spec.Branch, repo, base)
	default:
		return "", e.classify(err, "opening a %s from %s into %s in %s", n.Kind, spec.Branch, base, repo)
	}
}

// find returns the web URL of the open pull request from head into base, or
// "" when there is none. Each listed pull request is checked rather than
// trusting the host's filters: GitHub ignores a head filter it cannot read
// and lists every pull request, and on GitLab a fork's merge request can
// have the same source branch name. Neither may be taken for the job's.
func (e *Ensurer[R]) find(ctx context.Context, repo R, head, base string) (string, error) {
	prs, err := e.API.ListOpen(ctx, repo, head, base)
	if err != nil {
		return "", e.classify(err, "listing the open %ss of %s", e.Names.Kind, repo)
	}
	for _, pr := range prs {
		if pr.Open && !pr.Foreign && pr.Head == head && pr.Base == base && pr.URL != "" {
			return pr.URL, nil
		}
	}
	return "", nil
}

// classify wraps err, prefixed with the package and a description, and
// marks it engine.Permanent when a retry cannot help: the host refused the
// request itself (see PermanentStatus and API.Permanent), or the token
// function returned no token. Everything else (server errors, rate limits,
// network failures, a token function's own errors unless it marked them)
// stays transient, so the engine tries the job again later.
func (e *Ensurer[R]) classify(err error, format string, args ...any) error {
	wrapped := fmt.Errorf(e.Names.Package+": "+format+": %w", append(args, err)...)
	if errors.Is(err, ErrEmptyToken) || e.API.Permanent(err) {
		return engine.Permanent(wrapped)
	}
	return wrapped
}

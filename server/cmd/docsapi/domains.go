package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/docsapi/docsapi-go/server/store"
)

// checkDomain checks a project's domain identifier in the configuration
// file (where names it): a lower-case DNS label, no earlier project's.
func checkDomain(where, domain string, earlier []projectConfig) error {
	if domain == "" {
		return nil
	}
	if problem := store.DomainProblem(domain); problem != "" {
		return fmt.Errorf("%s: domain %q %s", where, domain, problem)
	}
	for i, o := range earlier {
		if o.Domain == domain {
			return fmt.Errorf("%s: domain %q is projects[%d]'s (%q) too: each project needs its own", where, domain, i, o.ID)
		}
	}
	return nil
}

// releaseDomains frees, before syncProjects sets the configured domains,
// every domain the configuration moves: a configured project's that the
// file changes or removes, and one a project absent from the file holds
// while the file gives it to another (that project's jobs cannot run
// anyway; a warning names it). Otherwise a domain moved from one project
// to another would conflict with itself, whichever project came first.
func releaseDomains(ctx context.Context, st store.Store, want []store.Project, log *slog.Logger) error {
	wanted := map[string]string{} // domain → the project the file gives it to
	domainOf := map[string]string{}
	for _, p := range want {
		domainOf[p.ID] = p.Domain
		if p.Domain != "" {
			wanted[p.Domain] = p.ID
		}
	}
	all, err := st.Projects(ctx)
	if err != nil {
		return fmt.Errorf("listing projects: %w", err)
	}
	for _, have := range all {
		if have.Domain == "" {
			continue
		}
		target, configured := domainOf[have.ID]
		switch {
		case configured && target == have.Domain:
			continue
		case !configured && wanted[have.Domain] == "":
			continue // neither the file nor another project wants it
		case !configured:
			log.Warn("docsapi: the configuration gives a domain to another project; the project not in the configuration loses it",
				slog.String("project_id", have.ID), slog.String("domain", have.Domain), slog.String("to", wanted[have.Domain]))
		}
		have.Domain = ""
		if err := st.UpdateProject(ctx, have); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("releasing the domain of project %q: %w", have.ID, err)
		}
	}
	return nil
}

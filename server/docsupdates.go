package server

import (
	"context"
	"net/http"
	"slices"

	"github.com/docsapi/docsapi-go/server/internal/base62"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// DocsUpdateEvents is told of documentation updates queued through the
// API, so that an updater in this process starts them at once (a
// *docsupdate.Updater is one). Without it, updaters find them by polling.
type DocsUpdateEvents interface {
	DocsUpdateQueued()
}

// triggerUpdate: POST /v1/project/update/{projectId}. The update re-reads
// the project's repository at its ref into the documentation index; a
// trigger while one of the project's updates is queued, not yet started,
// joins it and answers its status ID (it reads the repository as it is
// when it starts anyway).
func (s *Server) triggerUpdate(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	rec, err := s.QueueDocsUpdate(r.Context(), c.Project.ID, store.DocsTriggerAPI)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "queuing the update")
		return
	}
	respond.JSON(w, http.StatusAccepted, wire.UpdateTrigger{StatusID: rec.ID})
}

// QueueDocsUpdate queues an update of the project's documentation index,
// or joins the one queued already, and tells Config.DocsUpdates.
func (s *Server) QueueDocsUpdate(ctx context.Context, projectID, trigger string) (store.DocsUpdateRecord, error) {
	rec, _, err := s.cfg.Store.CreateDocsUpdate(ctx, store.NewDocsUpdate{
		ID: "upd_" + base62.Random(20), ProjectID: projectID, Trigger: trigger, CreatedAt: s.now(),
	})
	if err == nil && s.cfg.DocsUpdates != nil {
		s.cfg.DocsUpdates.DocsUpdateQueued()
	}
	return rec, err
}

// updateStatus: GET /v1/project/update-status/{statusId}. The path names
// no project: the update's must be one the key may use, and another
// project's update answers 404 as an unknown one does, so that a key
// learns nothing of other projects' updates.
func (s *Server) updateStatus() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, status, msg := s.auth.Authenticate(r)
		if status != 0 {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="docsapi"`)
			}
			respond.Error(w, status, msg)
			return
		}
		id := r.PathValue("statusId")
		rec, err := s.cfg.Store.DocsUpdate(r.Context(), id)
		if err == nil && !slices.Contains(key.Projects, rec.ProjectID) {
			err = store.ErrNotFound
		}
		if err != nil {
			respond.StoreError(w, r, s.cfg.Logger, err, "update status "+respond.Quote(id), "loading the update")
			return
		}
		s.api(keyauth.Agent, store.ScopeRead, func(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
			respond.JSON(w, http.StatusOK, publicUpdate(rec, c.Project))
		}).ServeHTTP(w, withProject(r, rec.ProjectID))
	})
}

// withProject is r with the path value projectId set, for the key checks
// of a route whose path names no project.
func withProject(r *http.Request, projectID string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.SetPathValue("projectId", projectID)
	return r2
}

// publicUpdate is an update as the API shows it.
func publicUpdate(u store.DocsUpdateRecord, p store.Project) wire.UpdateStatus {
	out := wire.UpdateStatus{
		ID: u.ID, ProjectID: u.ProjectID, CreatedAt: wire.Time(u.CreatedAt), Status: string(u.Status),
		Summary: u.Summary, Logs: append([]string{}, u.Logs...), Source: "internal",
	}
	if p.Domain != "" {
		out.UpdateSite = &wire.UpdateSite{Subdomain: p.Domain}
	}
	if u.Trigger == store.DocsTriggerAPI {
		out.Source = "api"
	}
	if !u.EndedAt.IsZero() {
		out.UpdateEnded = &wire.UpdateEnded{EndedAt: wire.Time(u.EndedAt)}
	}
	switch u.Status {
	case store.DocsUpdateQueued:
		out.Summary = "queued: waiting for an updater"
	case store.DocsUpdateInProgress:
		out.Summary = "reading the repository"
	}
	if u.Commit.SHA != "" {
		out.UpdateRead = &wire.UpdateRead{Commit: wire.UpdateCommit{SHA: u.Commit.SHA, Ref: u.Commit.Ref, Message: u.Commit.Message,
			FilesChanged: wire.UpdateFilesChanged{
				Added:    append([]string{}, u.Commit.Added...),
				Modified: append([]string{}, u.Commit.Modified...),
				Removed:  append([]string{}, u.Commit.Removed...),
			}}}
	}
	return out
}

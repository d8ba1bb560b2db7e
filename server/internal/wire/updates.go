package wire

// UpdateTrigger answers POST /v1/project/update/{projectId} (the
// UpdateTrigger schema).
type UpdateTrigger struct {
	StatusID string `json:"statusId"`
}

// UpdateStatus is an update's status in the hosted shape (the
// UpdateStatus schema). What the server has no value for is left out, as
// the hosted document (which requires no field) allows: endedAt while the
// update runs, subdomain for a project without a domain, commit until the
// repository was read, and the screenshots always; author, which it
// marks nullable, is null.
type UpdateStatus struct {
	ID        string        `json:"_id"`
	ProjectID string        `json:"projectId"`
	CreatedAt string        `json:"createdAt"`
	EndedAt   *string       `json:"endedAt,omitempty"`
	Status    string        `json:"status"`
	Summary   string        `json:"summary"`
	Logs      []string      `json:"logs"`
	Subdomain string        `json:"subdomain,omitempty"`
	Author    *struct{}     `json:"author"`
	Commit    *UpdateCommit `json:"commit,omitempty"`
	Source    string        `json:"source"`
}

// UpdateCommit is the commit an update read (the UpdateCommit schema).
type UpdateCommit struct {
	SHA          string             `json:"sha"`
	Ref          string             `json:"ref"`
	Message      string             `json:"message"`
	FilesChanged UpdateFilesChanged `json:"filesChanged"`
}

// UpdateFilesChanged lists the files of an update's commit by change.
type UpdateFilesChanged struct {
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

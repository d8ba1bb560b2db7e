package wire

// UpdateTrigger answers POST /v1/project/update/{projectId} (the
// UpdateTrigger schema).
type UpdateTrigger struct {
	StatusID string `json:"statusId"`
}

// UpdateStatus is an update's status in the hosted shape (the
// UpdateStatus schema), which requires no property: what the server has
// no value for is left out, each in a group of its own, and author, which
// the schema makes nullable, is null.
type UpdateStatus struct {
	ID        string        `json:"_id"`
	ProjectID string        `json:"projectId"`
	CreatedAt string        `json:"createdAt"`
	Status    string        `json:"status"`
	Summary   string        `json:"summary"`
	Logs      []string      `json:"logs"`
	Author    *UpdateAuthor `json:"author"` // always null: the server knows no commit author's accounts
	Source    string        `json:"source"`
	*UpdateEnded
	*UpdateSite
	*UpdateRead
	*UpdateScreenshots
}

// UpdateEnded is sent once the update ended.
type UpdateEnded struct {
	EndedAt string `json:"endedAt"`
}

// UpdateSite is sent when the project has a domain identifier.
type UpdateSite struct {
	Subdomain string `json:"subdomain"`
}

// UpdateRead is sent once the update read the repository.
type UpdateRead struct {
	Commit UpdateCommit `json:"commit"`
}

// UpdateScreenshots are the hosted service's pictures of the deployed
// site; the server renders no site, so it never sends them.
type UpdateScreenshots struct {
	Screenshot      string `json:"screenshot"`
	ScreenshotLight string `json:"screenshotLight"`
	ScreenshotDark  string `json:"screenshotDark"`
}

// UpdateAuthor is the author of the commit an update deployed (the
// UpdateAuthor schema).
type UpdateAuthor struct {
	Name         string `json:"name"`
	AvatarURL    string `json:"avatarUrl"`
	GitHubUserID int64  `json:"githubUserId"`
}

// UpdateCommit is the commit an update read (the UpdateCommit schema).
type UpdateCommit struct {
	SHA          string             `json:"sha"`
	Ref          string             `json:"ref"`
	Message      string             `json:"message"`
	FilesChanged UpdateFilesChanged `json:"filesChanged"`
}

// UpdateFilesChanged lists the files of an update's commit by change (the
// UpdateFilesChanged schema).
type UpdateFilesChanged struct {
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

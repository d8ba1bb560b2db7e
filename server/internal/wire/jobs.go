package wire

// Job is an agent job (the Job schema). The server sends every property,
// null where the schema allows it.
type Job struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"` // a JobStatus: active, completed, archived or failed
	Source     JobSource `json:"source"`
	Model      string    `json:"model"`
	PRLink     *string   `json:"prLink"`
	CreatedAt  string    `json:"createdAt"`
	ArchivedAt *string   `json:"archivedAt"`
}

// JobSource is the repository a job works on (the JobSource schema).
type JobSource struct {
	Repository string  `json:"repository"`
	Ref        *string `json:"ref"`
}

// JobsPage is one page of the job list (the JobsPage schema).
type JobsPage struct {
	Jobs       []Job   `json:"jobs"`
	NextCursor *string `json:"nextCursor"`
	HasMore    bool    `json:"hasMore"`
}

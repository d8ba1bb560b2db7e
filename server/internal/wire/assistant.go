package wire

// AssistantConversationsPage is one page of the assistant conversations
// export (the AssistantConversationsPage schema); a null NextCursor and a
// false HasMore mark the last page.
type AssistantConversationsPage struct {
	Conversations []AssistantConversation `json:"conversations"`
	NextCursor    *string                 `json:"nextCursor"`
	HasMore       bool                    `json:"hasMore"`
}

// AssistantConversation is one question to the assistant and its reply
// (the AssistantConversation schema). QueryCategory is always null: this
// server does not sort questions into categories.
type AssistantConversation struct {
	ID               string            `json:"id"`
	Timestamp        string            `json:"timestamp"`
	Query            string            `json:"query"`
	Response         string            `json:"response"`
	ResponseType     string            `json:"responseType"`
	Sources          []AssistantSource `json:"sources"`
	ResolutionStatus string            `json:"resolutionStatus"`
	QueryCategory    *string           `json:"queryCategory"`
	PageURL          *string           `json:"pageUrl"`
}

// AssistantSource is a page a reply drew on (the AssistantSource schema).
type AssistantSource struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// AssistantThread is one thread, message by message (the AssistantThread
// schema).
type AssistantThread struct {
	ThreadID  string             `json:"threadId"`
	CreatedAt string             `json:"createdAt"`
	Messages  []AssistantMessage `json:"messages"`
}

// AssistantMessage is one message of a thread (the AssistantMessage
// schema): a reader's question (role user) or a reply (role assistant).
type AssistantMessage struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	CreatedAt string `json:"createdAt"`
}

// AssistantCallerStats counts questions by who asked (the
// AssistantCallerStats schema).
type AssistantCallerStats struct {
	Web   int64 `json:"web"`
	API   int64 `json:"api"`
	Other int64 `json:"other"`
	Total int64 `json:"total"`
}

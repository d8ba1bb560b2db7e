package docsapi_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"golang.org/x/time/rate"

	docsapi "github.com/docsapi/docsapi-go"
)

// These examples call the network, so they have no Output comment: go test
// compiles them but does not run them.

func ExampleNewClient() {
	// The library never reads the environment: pass the admin key ("mint_...").
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"),
		// Operations called with an empty projectID use this project.
		docsapi.WithProjectID("my-project"),
	)
	if err != nil {
		log.Fatal(err)
	}
	job, err := client.AgentJobs.Get(context.Background(), "", "job_123")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(job.Status)
}

// A self-hosted server speaks the same API; only the base URL changes.
func ExampleNewClient_selfHosted() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"),
		docsapi.WithBaseURL("https://docs-api.internal.example.com/api"),
		docsapi.WithProjectID("handbook"),
		docsapi.WithUserAgent("release-bot/1.4"),
		docsapi.WithMaxRetries(5),
		// One request every 36 s on average stays inside an hourly budget of 100.
		docsapi.WithRateLimiter(rate.NewLimiter(rate.Every(36*time.Second), 10)),
		docsapi.WithLogger(slog.Default()),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(client)
}

func ExampleAgentJobsService_CreateAndWait() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	job, err := client.AgentJobs.CreateAndWait(ctx, "",
		docsapi.CreateJobParams{Prompt: "Document the new --dry-run flag of the deploy command"},
		docsapi.WaitParams{Timeout: 20 * time.Minute})
	var failed *docsapi.JobFailedError
	var timedOut *docsapi.WaitTimeoutError
	switch {
	case errors.As(err, &failed):
		log.Fatalf("the agent failed on job %s", failed.Job.ID)
	case errors.As(err, &timedOut):
		// The job goes on running on the server; its ID is enough to wait again.
		log.Fatalf("job %s still %s after %s", job.ID, job.Status, timedOut.Waited)
	case err != nil:
		log.Fatal(err)
	}
	if job.PRLink == "" {
		// Completed without a pull request: nothing changed, or the
		// project pushes to its branch directly.
		fmt.Println("no change")
		return
	}
	fmt.Println("pull request:", job.PRLink)
}

func ExampleAgentJobsService_Wait() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	job, err := client.AgentJobs.Wait(context.Background(), "", "job_123", docsapi.WaitParams{
		MinInterval: 5 * time.Second,
		MaxInterval: time.Minute,
		Timeout:     time.Hour,
		// Called with every job observed, the final one included.
		OnUpdate: func(j *docsapi.Job) {
			log.Printf("job %s: %s", j.ID, j.Status)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(job.Status, job.PRLink)
}

func ExampleAgentJobsService_SendMessage() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// A follow-up instruction sets the agent to work on the job again.
	job, err := client.AgentJobs.SendMessage(ctx, "", "job_123",
		docsapi.SendMessageParams{Prompt: "Also add an example of the flag to the quickstart"})
	if err != nil {
		log.Fatal(err)
	}
	job, err = client.AgentJobs.Wait(ctx, "", job.ID, docsapi.WaitParams{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(job.Status, job.PRLink)
}

func ExampleAnalyticsService_AllViews() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	// All of January 2026: DateTo is exclusive.
	params := docsapi.ViewsParams{
		DateFrom: docsapi.Day(2026, time.January, 1),
		DateTo:   docsapi.Day(2026, time.February, 1),
	}
	for view, err := range client.Analytics.AllViews(context.Background(), "", params) {
		if err != nil {
			// Yielded once; the loop ends after it. Rows already printed stay valid.
			log.Fatal(err)
		}
		fmt.Printf("%s\thuman %d\tai %d\n", view.Path, view.Human, view.AI)
	}
}

func ExampleAnalyticsService_Views() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	// The last seven days up to now; Instant sends an exact time.
	now := time.Now()
	page, err := client.Analytics.Views(context.Background(), "", docsapi.ViewsParams{
		DateFrom: docsapi.Instant(now.AddDate(0, 0, -7)),
		DateTo:   docsapi.Instant(now),
		Limit:    10,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Totals cover the whole range, not only the ten rows of this page.
	t := page.Totals
	fmt.Printf("%d views: %d human, %d AI\n", t.Total, t.Human, t.AI)
	for _, v := range page.Views {
		fmt.Printf("%6d  %s\n", v.Total, v.Path)
	}
}

// Collect gathers an iterator's rows into a slice, for exports small enough
// to hold in memory.
func ExampleCollect() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	views, err := docsapi.Collect(client.Analytics.AllViews(context.Background(), "", docsapi.ViewsParams{
		DateFrom: docsapi.Day(2026, time.January, 1),
	}))
	if err != nil {
		// views holds the rows received before the error.
		log.Fatalf("after %d rows: %v", len(views), err)
	}
	fmt.Println(len(views), "pages viewed")
}

func ExampleAPIError() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.AgentJobs.Create(context.Background(), "",
		docsapi.CreateJobParams{Prompt: "Fix the broken links in the changelog"})

	var apiErr *docsapi.APIError
	switch {
	case err == nil:
		fmt.Println("started")
	case errors.Is(err, docsapi.ErrRateLimited):
		// The hosted service sends no Retry-After; a self-hosted server may.
		wait := time.Minute
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			wait = apiErr.RetryAfter
		}
		fmt.Println("rate limited; try again in", wait)
	case errors.Is(err, docsapi.ErrUnauthorized):
		log.Fatal("the key is invalid or expired")
	case errors.Is(err, docsapi.ErrInvalidParam):
		log.Fatal(err) // refused before sending; the message names the parameter
	case errors.As(err, &apiErr):
		log.Fatalf("%s %s: status %d: %s (request id %q)",
			apiErr.Method, apiErr.Path, apiErr.StatusCode, apiErr.Message, apiErr.RequestID)
	default:
		log.Fatal(err) // a network failure
	}
}

// With an idempotency key, a server that honours it (the self-hosted one
// does; the hosted service documents no such header) returns the same job for
// a repeated create, so the client may retry the create after a 5xx or a
// dropped connection.
func ExampleWithIdempotencyKey() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"),
		docsapi.WithBaseURL("https://docs-api.internal.example.com"),
		docsapi.WithProjectID("handbook"))
	if err != nil {
		log.Fatal(err)
	}
	// One key per logical operation, stored with the work item, so that a
	// rerun of the whole program reuses it too.
	key := "release-2026.01-docs"
	job, err := client.AgentJobs.Create(context.Background(), "",
		docsapi.CreateJobParams{Prompt: "Write the release notes for 2026.01"},
		docsapi.WithIdempotencyKey(key))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(job.ID)
}

// The searches export pages by cursor: AllSearches follows nextCursor until
// it is null, one request per 100 searches.
func ExampleAnalyticsService_AllSearches() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	params := docsapi.SearchesParams{
		DateFrom: docsapi.Day(2026, time.January, 1),
		DateTo:   docsapi.Day(2026, time.February, 1), // exclusive
	}
	for s, err := range client.Analytics.AllSearches(context.Background(), "", params) {
		if err != nil {
			// Yielded once, then the loop ends; a cursor the server hands
			// out twice is such an error, never an endless loop.
			log.Fatal(err)
		}
		if s.TopClickedPage == "" { // null: nobody opened a result
			fmt.Printf("%5d  %q finds nothing useful\n", s.Hits, s.Query)
		}
	}
}

// One page at a time, for a caller that stores the cursor and resumes
// later, for example after the hourly budget is spent.
func ExampleAnalyticsService_Searches() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	params := docsapi.SearchesParams{Limit: 100}
	for {
		page, err := client.Analytics.Searches(context.Background(), "", params)
		if err != nil {
			log.Fatalf("stopped at cursor %q: %v", params.Cursor, err)
		}
		for _, s := range page.Searches {
			fmt.Println(s.Hits, s.Query)
		}
		if page.NextCursor == "" { // null: the last page
			break
		}
		params.Cursor = page.NextCursor
	}
}

// Feedback entries of every source share one type; Source says which of the
// source-specific fields mean something.
func ExampleAnalyticsService_AllFeedback() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	params := docsapi.FeedbackParams{
		// Sent as status=pending,in_progress.
		Status: []docsapi.FeedbackStatus{docsapi.FeedbackStatusPending, docsapi.FeedbackStatusInProgress},
	}
	for e, err := range client.Analytics.AllFeedback(context.Background(), "", params) {
		if err != nil {
			log.Fatal(err)
		}
		comment := "(no comment)"
		if e.Comment != nil {
			comment = *e.Comment
		}
		switch e.Source {
		case docsapi.FeedbackSourceContextual, docsapi.FeedbackSourceThumbsOnly:
			// yes, no, or unknown when the server sent no vote (the hosted
			// service sends none on thumbs-only entries).
			fmt.Printf("%s helpful=%s %s\n", e.Path, e.Helpful, comment)
		case docsapi.FeedbackSourceCodeSnippet:
			fmt.Printf("%s code block in %s: %s\n", e.Path, e.Lang, comment)
		default: // agent, or a source added since
			fmt.Printf("%s [%s] %s\n", e.Path, e.Source, comment)
		}
	}
}

// The questions the assistant could not answer, over the last week.
func ExampleAnalyticsService_AllAssistantConversations() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	params := docsapi.AssistantConversationsParams{DateFrom: docsapi.Instant(time.Now().AddDate(0, 0, -7))}
	for c, err := range client.Analytics.AllAssistantConversations(context.Background(), "", params) {
		if err != nil {
			log.Fatal(err)
		}
		// Statuses the SDK does not know yet are kept as sent.
		if c.ResolutionStatus == docsapi.AssistantUnanswered {
			fmt.Printf("%s  %s (asked on %s)\n", c.Timestamp.Format(time.DateOnly), c.Query, c.PageURL)
		}
	}
}

func ExampleAnalyticsService_AssistantThread() {
	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"), docsapi.WithProjectID("my-project"))
	if err != nil {
		log.Fatal(err)
	}
	thread, err := client.Analytics.AssistantThread(context.Background(), "", "01JH8Z5Q4R7V2W3X4Y5Z6A7B8C")
	if errors.Is(err, docsapi.ErrNotFound) {
		log.Fatal("no such thread")
	} else if err != nil {
		log.Fatal(err)
	}
	for _, m := range thread.Messages {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
}

// Package docsapi is a client for the documentation platform's HTTP API: it
// starts background agent jobs that edit documentation and open pull
// requests, and it reads the analytics exports: page views and visitors split
// into human and AI traffic, site searches, reader feedback, and the
// assistant's conversations. The same client talks to the hosted service and to a self-hosted
// server built from this module's server package.
//
// # Getting started
//
// Create one Client and share it; it is safe for concurrent use. The key is
// an admin API key ("mint_..."); the library never reads the environment
// itself:
//
//	client, err := docsapi.NewClient(os.Getenv("DOCSAPI_KEY"),
//		docsapi.WithProjectID("my-project"))
//	if err != nil {
//		log.Fatal(err)
//	}
//	job, err := client.AgentJobs.CreateAndWait(ctx, "",
//		docsapi.CreateJobParams{Prompt: "Document the new --verbose flag"},
//		docsapi.WaitParams{})
//
// Every operation has the same shape: a context, the project ID (empty means
// the client's default, set with WithProjectID), then the resource IDs, a
// params struct, and optional per-call RequestOptions.
//
// # Errors
//
// A response outside 2xx is an *APIError with the status, the server's
// message and details, the request ID and any Retry-After. It matches the
// sentinels with errors.Is:
//
//	var apiErr *docsapi.APIError
//	switch {
//	case errors.Is(err, docsapi.ErrNotFound):
//		// no such job
//	case errors.As(err, &apiErr) && apiErr.StatusCode == 429:
//		// wait apiErr.RetryAfter, if the server said
//	}
//
// Arguments are checked before anything is sent; a bad one is a
// *ValidationError naming the parameter, matching ErrInvalidParam.
//
// # Retries
//
// Reads are retried on network errors, 408, 429 and 5xx, with exponential
// backoff and jitter (WithMaxRetries, WithRetryDelays), and every wait ends
// when the context does. A Retry-After header is honoured up to
// WithMaxRetryAfter; a longer one, or one longer than the context has left,
// returns the *APIError at once with RetryAfter set. After the last retry the last error is returned, with the
// attempt count added to its message.
//
// Writes (Create, SendMessage) start agents, so a duplicate would open a
// second pull request. Without an idempotency key they are retried only when
// the server surely did not act: the connection was refused, or the answer
// was 429. With WithIdempotencyKey, against a server that honours the header
// (the self-hosted server does; the hosted service documents no such header),
// they are retried like reads.
//
// WithRateLimiter makes every attempt wait for a token from an
// x/time/rate limiter, to stay inside the service's hourly budgets.
//
// # Waiting for a job
//
// AgentJobsService.Wait polls until the job is completed, archived or
// failed, at intervals that grow from WaitParams.MinInterval towards
// MaxInterval.
// Transient errors and unknown statuses do not stop it; 400, 401, 403 and 404
// do. A failed job comes back with a *JobFailedError, and a wait that runs
// out of time with a *WaitTimeoutError carrying the last job seen. A
// completed job may have an empty PRLink: no file changed, or the project
// pushes to its branch directly.
//
// # Pagination
//
// AnalyticsService.Views returns one page with the totals over the range.
// AnalyticsService.AllViews returns an iterator over every row of every page:
//
//	for view, err := range client.Analytics.AllViews(ctx, "", docsapi.ViewsParams{
//		DateFrom: docsapi.Day(2026, time.October, 1),
//		DateTo:   docsapi.Day(2026, time.November, 1), // exclusive
//	}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(view.Path, view.Human, view.AI)
//	}
//
// Nothing is requested until the loop starts; a break stops all requests; an
// error is yielded once and ends the loop; an empty page ends it too. Collect
// gathers the rows in a slice. WithPrefetch(n) keeps up to n requests in
// flight for pages known to exist, rows still in order, which shortens a long
// export when latency dominates.
//
// AllVisitors pages by offset like AllViews. AllSearches, AllFeedback and
// AllAssistantConversations page by cursor, with the same promises: searches
// end when nextCursor is null, feedback and the assistant when hasMore is
// false, and a cursor handed out twice is an error rather than an endless
// loop. Every analytics request, each page of an iterator included, counts
// against the hosted service's budget of 100 requests per organisation per
// hour. Counts are exact in any JSON number form; values of enumerations the
// SDK does not know (a new feedback source, say) are kept, and Known tells
// them apart.
//
// # Logging
//
// WithLogger logs each attempt (method, path without query, status, attempt,
// duration, request ID) at Debug and each retry at Info. The key, bodies and
// query strings are never logged, and the key's printed forms are redacted.
//
// # Self-hosting
//
// The server package implements the same API, so the client works against it
// unchanged: point WithBaseURL at it.
package docsapi
